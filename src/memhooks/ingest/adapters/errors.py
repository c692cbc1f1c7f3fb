"""Moved to memhooks.classify (a leaf module: admission in store/ uses it too). This name
stays for code written against it."""

from memhooks.classify import *  # noqa: F403
from memhooks.classify import SHORT_CHARS  # noqa: F401
