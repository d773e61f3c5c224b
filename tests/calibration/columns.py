"""What a learner reads in every per-row table of ``python -m chipsim calibrate``."""

ROW_COLUMNS = ["op", "shape", "dtype", "set", "measured_us", "simulated_us", "sim/meas", "error"]
