import sys

from ragspine_eval.cli import main

sys.exit(main())
