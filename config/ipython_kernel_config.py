# Configuration of the course's Jupyter kernels (ipykernel), installed by `make setup` into
# .venv/etc/ipython/, where every kernel started from the venv reads it: the book build, the
# downloaded chapters, `make lab`, nbgrader's Validate and autograding.
#
# The kernels the course starts talk to their manager over TCP on the loopback interface of
# this machine, so ipykernel's startup warning "Kernel is running over TCP without
# encryption" is printed by every chapter of the build (eleven times) without anything to
# act on. The kernel application's own log shows errors only; cell output, tracebacks and
# Python warnings in cells are unaffected.
c = get_config()  # noqa: F821 - provided by IPython when it loads this file
c.IPKernelApp.log_level = "ERROR"
