"""The kibench source tree this package came from: its build/ folder is the
last place libkibench_capi.so is looked for. The wheel builder
(python/backend) writes the tree's absolute path here."""

import os

_here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE_TREE = _here if os.path.isfile(os.path.join(_here, "include", "kibench", "kibench.h")) else None
