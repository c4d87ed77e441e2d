"""Modules the tests share: instances, hand-written schedules, test blocks and reference checks.

pytest puts ``tests/`` on ``sys.path`` (``pythonpath`` in pyproject's
``[tool.pytest.ini_options]``), so a test in any folder imports them as
``from helpers.block_cases import ...``; no test file touches ``sys.path``. A test file
never imports another test file: what two tests share lives here.
"""
