"""ragspine_eval: the closed evaluation loop of the RAGSpine engine.

Two harnesses score the engine against version-controlled golden sets (QA and extraction);
a per-mode baseline gate fails CI on any regression and only ever ratchets up.
The CLI and the notebooks are thin layers over the functions of this package.
"""

__version__ = "0.1.0"
