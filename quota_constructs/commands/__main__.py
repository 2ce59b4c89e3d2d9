"""``python -m quota_constructs.commands``: the ``quota`` command."""

from quota_constructs.commands import main

main()
