"""O planejador com a turma que a coleta devolve (issue 42, M2), sem kernel nem Dask: a entrega
recusada vira uma linha `invalid-notebook` com o motivo, o espelho no workspace só tem o que a
correção usa, e as tarefas só leem os bytes na hora de ir ao Dask.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

from autograder.collect import gather
from autograder.core.results import GradeCell, JobResult, Status
from autograder.core.settings import MIB, CollectLimits
from autograder.plan.runner import (Job, TaskLoader, _mirror, build_tasks, job_key, keyed_files,
                                    refused_result)

TZ = ZoneInfo("America/Sao_Paulo")
A = "01-pontuacoes"
NB = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
INFO = SimpleNamespace(notebooks=[A], cells={A: [GradeCell("q1", "test", 6.0), GradeCell("q2", "test", 4.0)]})


def _class(tmp_path: Path):
    z = tmp_path / "t.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as f:
        f.writestr(f"ana/{A}/{A}.ipynb", NB)
        f.writestr(f"ana/{A}/dados.csv", b"a,b\n1,2\n")
        with f.open(f"bomba/{A}/{A}.ipynb", "w") as w:
            for _ in range(4):
                w.write(bytes(MIB))
        f.writestr(f"caio/{A}/outro-nome.ipynb", NB + b" ")
    return {s.student: s for s in gather(z, {A: [A]}, TZ, limits=CollectLimits()).submissions}


def _job(sub) -> Job:
    return Job(sub.student, sub.assignment, job_key(keyed_files(sub.files, sub.refused), None, "h", "f"), None, sub.files,
               notes=list(sub.notes), participant=sub.participant, refused=list(sub.refused))


def test_a_refused_submission_becomes_an_invalid_row_that_says_why(tmp_path):
    subs = _class(tmp_path)
    job = _job(subs["bomba"])
    res = JobResult.from_json(refused_result(job, INFO).to_json())
    assert res.status is Status.INVALID and res.auto_score == 0 and res.max_score == 10.0
    assert res.details[0].startswith("entrega recusada: ") and "descomprime" in res.details[0]
    assert [q.grade_id for q in res.notebooks[0].questions] == ["q1", "q2"]
    # a chave muda com o motivo: um teto maior na próxima correção corrige a entrega de novo
    assert job.key != _job(subs["ana"]).key and job.key != job_key({}, None, "h", "f")


def test_the_mirror_holds_only_the_notebooks(tmp_path):
    subs = _class(tmp_path)
    dest = tmp_path / "ws" / "submitted" / "ana" / A
    _mirror(dest, subs["ana"].files, "2025-03-11 02:30:00.000000 UTC")
    assert sorted(p.name for p in dest.iterdir()) == [f"{A}.ipynb", "timestamp.txt"]
    assert (dest / f"{A}.ipynb").read_bytes() == NB
    before = (dest / f"{A}.ipynb").stat().st_mtime_ns
    _mirror(dest, subs["ana"].files, "2025-03-11 02:30:00.000000 UTC")     # igual: não reescreve
    assert (dest / f"{A}.ipynb").stat().st_mtime_ns == before
    _mirror(dest, subs["bomba"].files, None)                                # recusada: nada fica
    assert not dest.exists()


def test_tasks_carry_no_bytes_until_they_are_sent(tmp_path):
    subs = _class(tmp_path)
    todo = [_job(subs["ana"]), _job(subs["caio"])]
    tasks = build_tasks({A: INFO}, todo)
    assert [(t.student, t.raw, t.files) for t in tasks] == [("ana", None, {}), ("caio", None, {})]
    assert tasks[1].note == f"notebook com outro nome (outro-nome.ipynb) usado como {A}.ipynb"
    load = TaskLoader({A: INFO}, todo)
    full = [load(t) for t in tasks]
    assert [(t.raw, t.files, t.note) for t in full] == [(NB, {}, None), (NB + b" ", {}, tasks[1].note)]


def test_a_spool_left_by_a_killed_run_is_cleaned_at_the_next(tmp_path):
    """Um `grade` morto (kill -9) deixa os bytes da coleta em `.autograder/coleta-*`: o próximo,
    com a trava na mão, os apaga junto com as outras sobras."""
    from autograder.collect.spool import Spool
    from autograder.plan import lock
    ws = tmp_path / "ws"
    left = Spool(ws / ".autograder")
    left.put(NB)
    left._cleanup.detach()                 # como se o processo tivesse morrido sem limpar
    gone = lock.clean_leftovers(ws)
    assert str(left.dir) in gone and not left.dir.exists()
