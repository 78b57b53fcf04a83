"""Rendering: the notebooks run headlessly with papermill and each rendered to one offline HTML.

notebooks (the plan of runs, papermill on the project's kernel, the HTML reports with every
script inlined and the verdict lifted to the top), report_template/ (the nbconvert template),
kernel (the Jupyter kernel the notebooks are pinned to, never stale), kernel_ipc (its
provisioner: IPC instead of TCP). The top room of the workbench: it runs notebooks, and calls
the qa front only to write every QA report before the notebooks run (notebooks.py).
"""
