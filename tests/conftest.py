"""Session-wide settings: every test runs in the same neutral locale, whatever the machine's
(chipsim follows the locale's language when ``CHIPSIM_LANG`` is unset; tests that check that
set it themselves)."""

import os

os.environ["LC_ALL"] = "C.UTF-8"
os.environ.pop("LANGUAGE", None)
