"""Fixes: a rule's ``Repair`` (changes at document paths) -> exact text edits of the
original text (``edits``, ``places``, ``text``) -> applied and linted again until nothing
changes (``loop``).

May import: :mod:`gpulint.util`, :mod:`gpulint.model`, :mod:`gpulint.loader`.
"""
