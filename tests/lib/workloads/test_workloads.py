"""The book's task sets (hetlab.workloads)."""
import pytest


def test_skewed_tasks_refuses_a_string_of_kinds():
    # kinds='CPU' used to give tasks preferring 'C', 'P' and 'U'.
    from hetlab.workloads import skewed_tasks

    with pytest.raises(TypeError, match="kinds must be a sequence"):
        skewed_tasks(4, kinds="CPU")
    assert {t.kind for t in skewed_tasks(30, kinds=["GPU"]).tasks} == {"GPU"}
