"""Stage 5 of the pipeline, what is answered: schedules and the results of methods."""

from schedkit.schedule.schedule import Schedule, TaskRun, Transfer

__all__ = ["Schedule", "TaskRun", "Transfer"]
