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

from .store import write_result


def main() -> None:
    import asyncio
    args = json.loads(sys.argv[1])
    # o protocolo usa a saída padrão original; prints perdidos vão para o stderr (log)
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    warnings.filterwarnings("ignore")
    asyncio.run(serve(args, proto))


async def serve(args: dict, proto) -> None:
    """Corrige as entregas na ordem em que chegam (o pai manda até duas de uma vez);
    os kernels ficam com o KernelPool (job.py), que aquece o próximo sozinho."""
    import asyncio
    import threading
    from collections import deque

    from .course import Workspace
    from .executor import ExecSettings, KernelStartError
    from .job import KernelPool, grade_job

    ws = Workspace(Path(args["workspace"]), Path(args["solutions"]))
    infos = {a: ws.info(a, h) for a, h in args["sources"].items()}
    settings = ExecSettings(**args["settings"])
    shard_url = f"sqlite:///{args['shard']}"
    pool = KernelPool(ws, settings)
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue = asyncio.Queue()

    def reader():
        for line in sys.stdin:
            if line.strip():
                loop.call_soon_threadsafe(inbox.put_nowait, json.loads(line))
        loop.call_soon_threadsafe(inbox.put_nowait, None)

    threading.Thread(target=reader, daemon=True).start()
    queued: deque = deque()

    def drain():
        while not inbox.empty():
            queued.append(inbox.get_nowait())

    try:
        while True:
            drain()
            job = queued.popleft() if queued else await inbox.get()
            if job is None:
                break
            try:
                result = await grade_job(ws, infos[job["assignment"]], job, shard_url, settings, pool)
                write_result(ws.result_path(job["student"], job["assignment"]), result)
                reply = {"ok": True, "student": job["student"], "assignment": job["assignment"],
                         "status": str(result.status)}
            except KernelStartError as e:
                reply = {"ok": False, "infra": True, "error": str(e),
                         **{k: job[k] for k in ("student", "assignment")}}
            except Exception:  # noqa: BLE001 - o pai decide: tenta de novo ou relata
                reply = {"ok": False, "infra": False, "error": traceback.format_exc(),
                         **{k: job[k] for k in ("student", "assignment")}}
            print(json.dumps(reply, ensure_ascii=False), file=proto, flush=True)
    finally:
        await pool.close()
        st = pool.stats
        print(f"kernels: {st.student_starts} do aluno e {st.harness_starts} do corretor iniciados, "
              f"{st.harness_reuses} reaproveitamentos do corretor; encerrados: {st.recycled[:20]}",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
