"""Processo de correção: recebe entregas (uma linha JSON por entrega) e corrige.

Cada processo tem o seu shard do gradebook (uma cópia do gradebook.db só
dele), então vários podem rodar ao mesmo tempo sem o sqlite ser escrito por
dois nbgrader. O resultado de cada entrega é gravado de forma atômica em
`.autograder/resultados/<tarefa>/<aluno>.json`; a resposta na saída padrão é
só um aviso de "terminei". Uso interno: `python -m autograder.worker ARGS_JSON`.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
import warnings
from pathlib import Path


def write_result(path: Path, result: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(result, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def main() -> None:
    args = json.loads(sys.argv[1])
    # o protocolo usa a saída padrão original; prints perdidos vão para o stderr (log)
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    warnings.filterwarnings("ignore")

    from .course import Workspace
    from .executor import ExecSettings, KernelStartError
    from .job import grade_job

    ws = Workspace(Path(args["workspace"]), Path(args["solutions"]))
    infos = {a: ws.info(a, h) for a, h in args["sources"].items()}
    settings = ExecSettings(**args["settings"])
    shard_url = f"sqlite:///{args['shard']}"
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        try:
            result = grade_job(ws, infos[job["assignment"]], job, shard_url, settings)
            write_result(ws.result_path(job["student"], job["assignment"]), result)
            reply = {"ok": True, "student": job["student"], "assignment": job["assignment"],
                     "status": result["status"]}
        except KernelStartError as e:
            reply = {"ok": False, "infra": True, "error": str(e), **{k: job[k] for k in ("student", "assignment")}}
        except Exception:  # noqa: BLE001 - o pai decide: tenta de novo ou relata
            reply = {"ok": False, "infra": False, "error": traceback.format_exc(),
                     **{k: job[k] for k in ("student", "assignment")}}
        print(json.dumps(reply, ensure_ascii=False), file=proto, flush=True)


if __name__ == "__main__":
    main()
