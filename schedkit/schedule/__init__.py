"""Stage 5 of the pipeline, what is answered: schedules and the results of methods."""

from schedkit.schedule.schedule import Schedule, Status, TaskRun, Transfer, TransferTable
from schedkit.schedule.result import Quality, Result, Termination, status_word

__all__ = ["Schedule", "Status", "TaskRun", "Transfer", "TransferTable", "Quality", "Result", "Termination",
           "status_word"]
