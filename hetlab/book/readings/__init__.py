"""The book's readings: every Chinese sentence a chapter prints about a result, one module per chapter.

The library outside :mod:`hetlab.book` returns numbers, dataclasses and schedules; a reading turns one of
those results into the sentence a learner sees (``readings.ch10.serving_summary(result)``). Keeping the
sentences here means a model can be reused and tested without the book's wording, and a chapter editor
finds every printed verdict of a chapter in one file.
"""
