"""The held-out PDFs' workspace and their independent reading (tests/held_out_pdfs.py)."""

from held_out_pdfs import held_out_ws, pdf_text  # noqa: F401
