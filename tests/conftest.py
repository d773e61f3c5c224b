"""Session-wide settings: every test runs in the same neutral locale, whatever the machine's
(chipsim follows the locale's language when ``CHIPSIM_LANG`` is unset; tests that check that
set it themselves)."""

import os

os.environ["LC_ALL"] = "C.UTF-8"
os.environ.pop("LANGUAGE", None)

# The conftest files hold no doctests, and collecting them as doctest modules (--doctest-modules)
# imports each under the one name "conftest": the second one collected would clash.
collect_ignore_glob = ["*/conftest.py", "conftest.py"]
