
__version__ = "1.0.0"

from ._financial import *
