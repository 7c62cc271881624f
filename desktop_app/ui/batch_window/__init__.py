"""Running a workflow over the rows of a CSV file: the batch dialog, then the batch window.

:func:`open_batch` loads the version to run and opens a :class:`BatchDialog`: pick the CSV file,
see which column gives which parameter (and change it), see every problem before anything runs
(Run stays disabled while a row is bad), type the secrets once for every row, and choose how many
rows run at once. Run opens a :class:`BatchWindow` that lists every row with its status as the
rows run, can stop the batch, and ends with the results file (``<stem>.results.csv`` next to the
input). Running the same file again resumes: rows that succeeded before are skipped.

Its parts: :mod:`.dialog` (the batch dialog and :func:`open_batch`), :mod:`.mapping` (the column
→ parameter table), :mod:`.window` (the batch window and its run), :mod:`.progress` (the rows as
they run) and :mod:`.colors` (what they share).
"""

from desktop_app.ui.batch_window.dialog import BatchDialog, open_batch
from desktop_app.ui.batch_window.mapping import MappingModel
from desktop_app.ui.batch_window.progress import RowsProgressModel
from desktop_app.ui.batch_window.window import BatchWindow

__all__ = ["BatchDialog", "BatchWindow", "MappingModel", "RowsProgressModel", "open_batch"]
