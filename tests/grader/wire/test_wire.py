"""O protocolo entre os kernels (autograder/wire/protocol.py), sem kernel nenhum (issue 22).

As mensagens de ida e volta, o id de cada pedido (L2), a resposta corrompida que é do
corretor e não do aluno (L1), o tamanho medido antes de ler (H6) e a conexão cortada pelo
limite do socket, que não pode travar quem corrige. Os lados são os módulos de verdade
(harness_side, student_stub, relay), com `input()` e os kernels trocados por dublês.
"""

from __future__ import annotations

import builtins
import json
import time
from types import SimpleNamespace

import pytest
import zmq
from aio import run_async

from autograder.wire import harness as harness_side
from autograder.wire import protocol
from autograder.wire import student as student_stub
from autograder.wire import codec as wire
from autograder.box.kernel import SandboxKernel
from autograder.wire.protocol import (Blame, Callback, Envelope, Failure, Flag, Op, RaisedError, Relayed, Reply, Request)
from autograder.worker.relay import Relay

SAMPLES = [
    Request(op=Op.CALL, target=7, method="forward", args=[wire.encode(1.5)], kwargs={"x": wire.encode("a")},
            watchers=[["_Observador", wire.encode((3,))]]),
    Request(op=Op.GET, names=["q", "k"]),
    Reply(id="abc", value=wire.encode([1, 2]), changed={"a0": wire.encode(0)}, reports=[{"operacoes": 1}],
          names={"f": "value"}, values={"f": wire.encode(2)}, errors={"g": "NotData: não"}),
    Reply(id="abc", error=RaisedError(type="ValueError", message="entrada inválida")),
    Relayed(id="abc", text='{"kind": "reply"}', output="impresso\n"),
    Failure(id="abc", reason="tempo", blame=Blame.GRADER, output="x"),
    Callback(id="abc", text='{"kind": "request"}'),
    Flag(reason="relatório malformado"),
]


@pytest.mark.parametrize("msg", SAMPLES, ids=lambda m: type(m).__name__)
def test_each_message_type_survives_the_round_trip(msg):
    text = protocol.to_text(msg)
    assert json.loads(text)["kind"] == protocol._KINDS[type(msg)].value
    back = protocol.parse(text, type(msg))
    assert back == msg and type(back) is type(msg)
    assert protocol.parse(protocol.unprompt(protocol.prompt(msg)), type(msg)) == msg
    env = Envelope(text=text, raised="MemoryError")
    assert protocol.from_dict(Envelope, json.loads(protocol.to_text(env))) == env


def test_the_wire_files_define_no_name_twice_because_the_kernel_runs_them_in_one_module():
    """No kernel, codec.py, protocol.py e o lado (student.py ou harness.py) rodam no MESMO módulo
    (box/kernel.py, `_module_code`): um nome definido em dois deles faz o segundo apagar o
    primeiro só lá dentro, onde os testes sem kernel não olham. Visto em 2026-12-06: um `_shape`
    num rascunho do protocol.py trocava o do codec.py, e toda chamada ao aluno levantava
    TypeError. Importar o nome do outro arquivo (o mesmo objeto) pode."""
    import ast
    from pathlib import Path

    def defined(name: str) -> set[str]:
        out = set()
        for node in ast.parse((Path(protocol.__file__).parent / name).read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    out |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        return out

    common = defined("codec.py"), defined("protocol.py")
    for side in ("student.py", "harness.py"):
        parts = (*common, defined(side))
        clashes = {n for i, a in enumerate(parts) for b in parts[i + 1:] for n in a & b}
        assert not clashes, f"definidos em mais de um arquivo do módulo do kernel ({side}): {sorted(clashes)}"


def test_every_request_gets_its_own_random_id():
    ids = {Request(op=Op.NAMES).id for _ in range(200)}
    assert len(ids) == 200 and all(len(i) == 16 for i in ids)


@pytest.mark.parametrize("text", [
    '{"kind": "request", "op": "chamar", "id": "x"}',            # op antigo (em português)
    '{"kind": "request", "op": "call", "id": 3}',                # id que não é texto
    '{"kind": "request", "op": "call", "target": true}',         # alça booleana
    '{"kind": "reply", "id": "x", "falha": "?"}',                # campo desconhecido
    '{"kind": "reply", "id": "x", "changed": {"a0": 1}}',        # valor alterado sem codificação
    '{"kind": "reply", "id": "x", "error": {"type": "ValueError"}}',   # erro sem mensagem
    '{"kind": "relayed", "id": "x"}',                            # falta o texto
    '{"kind": "pickle", "id": "x"}', '{"r": "{}"}', "[1]", "{", "",
])
def test_a_malformed_message_is_refused(text):
    with pytest.raises(wire.BadWire):
        protocol.parse(text, Request, Reply, Relayed)


def test_a_message_of_another_kind_is_refused():
    with pytest.raises(wire.BadWire, match="inesperada"):
        protocol.parse(protocol.to_text(Flag(reason="x")), Reply)


def test_an_oversize_text_is_refused_before_it_is_parsed(monkeypatch):
    monkeypatch.setattr(wire, "MAX_BYTES", 100)
    monkeypatch.setattr(protocol, "MAX_BYTES", 100)

    def boom(*a, **k):
        raise AssertionError("o texto grande demais foi lido")
    monkeypatch.setattr(json, "loads", boom)
    with pytest.raises(wire.NotData):                  # quem escreve também mede
        protocol.to_text(Flag(reason="x" * 200))
    with pytest.raises(wire.BadWire, match="maior"):
        protocol.parse('{"kind": "flag", "reason": "' + "x" * 200 + '"}', Flag)
    assert protocol.unprompt(protocol.PREFIX + "x" * 200) is None


# ----------------------------------------------------------------------------- lado do corretor

class _Executor:
    """O executor visto do kernel do corretor: responde cada `input()` com `answer(pedido)`."""

    def __init__(self, answer):
        self.answer, self.flags = answer, []

    def __call__(self, prompt_text):
        msg = protocol.parse(protocol.unprompt(prompt_text), Request, Flag, Reply)
        if isinstance(msg, Flag):
            self.flags.append(msg.reason)
            return protocol.to_text(Reply(id=msg.id))
        return protocol.to_text(self.answer(msg))


def _student_says(reply_of):
    """Um executor que repassa a resposta que `reply_of(pedido)` dá como texto do aluno."""
    return _Executor(lambda req: Relayed(id=req.id, text=reply_of(req)))


def _remote():
    return harness_side.Remote(wire.Handle(1, wire.STUDENT, "function", "f"))


def test_a_student_error_comes_back_as_the_builtin(monkeypatch):
    ex = _student_says(lambda req: protocol.to_text(
        Reply(id=req.id, error=RaisedError(type="ValueError", message="nada"))))
    monkeypatch.setattr(builtins, "input", ex)
    with pytest.raises(ValueError, match="nada"):
        _remote()(None)
    assert ex.flags == []


def test_a_corrupt_reply_is_the_graders_problem_not_a_student_valueerror(monkeypatch):
    """L1: '{' no lugar da resposta não vira "a função levantou ValueError" (passaria num
    `conferir_erro(..., tipo=ValueError)`): o corretor não pôde julgar, e o notebook vai para
    revisão com o motivo."""
    ex = _student_says(lambda req: "{")
    monkeypatch.setattr(builtins, "input", ex)
    with pytest.raises(harness_side.StudentKernelFailure, match="não pôde julgar") as e:
        _remote()(None)
    assert not isinstance(e.value, ValueError)
    assert len(ex.flags) == 1 and "corrompida" in ex.flags[0], ex.flags


def test_a_reply_with_a_forged_value_is_the_graders_problem(monkeypatch):
    ex = _student_says(lambda req: protocol.to_text(Reply(id=req.id, value={"t": "pickle", "v": "..."})))
    monkeypatch.setattr(builtins, "input", ex)
    with pytest.raises(harness_side.StudentKernelFailure):
        _remote()(None)
    assert any("valor inválido" in f for f in ex.flags), ex.flags


@pytest.mark.parametrize("where", ["executor", "student"])
def test_a_reply_to_another_request_is_refused(monkeypatch, where):
    """L2: uma resposta cujo id não é o do pedido (do executor ou do aluno) não é aceita."""
    good = lambda req: protocol.to_text(Reply(id=req.id, value=wire.encode(2)))  # noqa: E731
    if where == "executor":
        ex = _Executor(lambda req: Relayed(id=protocol.new_id(), text=good(req)))
    else:
        ex = _student_says(lambda req: protocol.to_text(Reply(id=protocol.new_id(), value=wire.encode(2))))
    monkeypatch.setattr(builtins, "input", ex)
    with pytest.raises(harness_side.StudentKernelFailure, match="não pôde julgar"):
        _remote()(1)
    assert any("outro pedido" in f for f in ex.flags), ex.flags
    # controle: com o id certo, o valor chega
    monkeypatch.setattr(builtins, "input", _student_says(good))
    assert _remote()(1) == 2


def test_a_failure_blamed_on_the_grader_flags_and_one_on_the_student_does_not(monkeypatch):
    for blame, flagged in ((Blame.GRADER, True), (Blame.STUDENT, False)):
        ex = _Executor(lambda req, b=blame: Failure(id=req.id, reason="sem resposta", blame=b))
        monkeypatch.setattr(builtins, "input", ex)
        with pytest.raises(harness_side.StudentKernelFailure, match="sem resposta"):
            _remote()(1)
        assert bool(ex.flags) is flagged, (blame, ex.flags)


# ----------------------------------------------------------------------------- lado do aluno

def test_the_student_stub_answers_with_the_request_id_and_refuses_another():
    req = Request(op=Op.NAMES)
    student_stub.serve(protocol.to_text(req))
    env = protocol.from_dict(Envelope, student_stub.reply._repr_json_())
    assert protocol.parse(env.text, Reply).id == req.id and env.raised is None
    student_stub.serve("{")                      # pedido ilegível: um erro, sem id
    env = protocol.from_dict(Envelope, student_stub.reply._repr_json_())
    assert env.raised == "BadWire" and protocol.parse(env.text, Reply).id == ""


def test_a_harness_object_refuses_a_reply_to_another_request(monkeypatch):
    obj = student_stub.HarnessObject(wire.Handle(5, wire.HARNESS))
    monkeypatch.setattr(builtins, "input", lambda p: protocol.to_text(Reply(id="outro", value=wire.encode(1))))
    with pytest.raises(RuntimeError, match="não respondeu"):
        obj(1)

    def same_id(p):
        return protocol.to_text(Reply(id=protocol.parse(protocol.unprompt(p), Request).id, value=wire.encode(1)))
    monkeypatch.setattr(builtins, "input", same_id)
    assert obj(1) == 1


def test_a_handle_is_typed_on_both_sides_and_checked_when_it_arrives(monkeypatch):
    """Uma alça atravessa como `codec.Handle` (número, lado, tipo, nome), nunca como um
    dicionário solto; a que chega fora do formato é `BadWire`."""
    monkeypatch.setattr(harness_side, "_local", {})
    monkeypatch.setattr(harness_side, "_local_ids", {})
    f = lambda x: x  # noqa: E731
    enc = wire.encode([f], lambda obj: wire.Handle.of(7, wire.STUDENT, obj, "f"))
    got = wire.decode(enc, lambda h: h)[0]
    assert got == wire.Handle(7, wire.STUDENT, "function", "f")
    assert wire.Handle.of(1, wire.HARNESS, int).kind == "class" and wire.Handle.of(1, wire.HARNESS, 3).kind == "object"
    for bad in ({"t": "handle", "id": "7"}, {"t": "handle", "id": 7, "side": "outro"}):
        with pytest.raises(wire.BadWire):
            wire.decode(bad, lambda h: h)
    # sem lado: é do aluno (o corretor faz dele um Remote); o nome vem cortado
    remote = wire.decode({"t": "handle", "id": 3, "name": "x" * 500}, harness_side._from_handle)
    assert isinstance(remote, harness_side.Remote) and remote._ag_handle.side == wire.STUDENT
    assert len(remote._ag_handle.name) == 80
    # a alça de um Remote que volta ao aluno é a mesma; a de um objeto do corretor é do corretor
    assert harness_side._to_handle(remote) is remote._ag_handle
    h = harness_side._to_handle(f)
    assert h.side == wire.HARNESS and harness_side._from_handle(h) is f
    assert isinstance(student_stub._from_handle(h), student_stub.HarnessObject)


def test_both_proxies_share_one_base_and_ask_nothing_for_python_names(monkeypatch):
    monkeypatch.setattr(builtins, "input", lambda p: pytest.fail(f"pediu ao outro kernel: {p[:80]}"))
    for proxy in (_remote(), student_stub.HarnessObject(wire.Handle(5, wire.HARNESS))):
        assert isinstance(proxy, protocol.Proxy)
        for name in ("__wrapped__", "_repr_html_", "_ipython_display_"):
            with pytest.raises(AttributeError):
                getattr(proxy, name)


def test_the_harness_serves_the_student_through_a_table(monkeypatch):
    """O aluno usa um objeto do corretor: cada operação tem a sua entrada na tabela; atributo
    privado, operação fora da tabela e alça desconhecida voltam como erro (só o tipo)."""
    class Model:
        scale = 3

        def __call__(self, x):
            return self.scale * x

    monkeypatch.setattr(harness_side, "_local", {})
    monkeypatch.setattr(harness_side, "_local_ids", {})
    obj = [10, 20]
    hm, hl = harness_side._to_handle(Model()).id, harness_side._to_handle(obj).id

    def serve(op, target, **fields):
        return harness_side._serve_callback(protocol.to_text(Request(op=op, target=target, **fields)))
    assert wire.decode(serve(Op.CALL, hm, args=[wire.encode(2)]).value) == 6
    assert wire.decode(serve(Op.ATTR, hm, name="scale").value) == 3
    assert wire.decode(serve(Op.ITEM, hl, key=wire.encode(1)).value) == 20
    assert wire.decode(serve(Op.ITER, hl).value) == [10, 20]
    assert wire.decode(serve(Op.LEN, hl).value) == 2
    assert set(harness_side._CALLBACK_OPS) == set(Op) - {Op.NAMES, Op.GET, Op.SETATTR}
    for op, target, fields, error in [(Op.ATTR, hm, {"name": "__class__"}, "AttributeError"),
                                      (Op.SETATTR, hm, {"name": "scale", "value": wire.encode(1)}, "BadWire"),
                                      (Op.LEN, 12345, {}, "KeyError")]:
        reply = serve(op, target, **fields)
        assert reply.value is None and reply.error.type == error, (op, reply)
        assert reply.error.message == "erro no objeto do corretor"


# ----------------------------------------------------------------------------- executor

class _Pair:
    """O `KernelPair` que o repasse lê e escreve, com os kernels trocados por dublês."""

    def __init__(self, student_env=None, harness_msgs=()):
        self.student = SimpleNamespace(lost=None)
        self.student_dead = False
        self.relay_client = SimpleNamespace(reset=lambda: None)
        self.outcome = SimpleNamespace(flags=[])
        self.cell_index = 0
        self.statuses, self.troubles, self.sent = [], [], []
        self.student_env = student_env
        msgs = list(harness_msgs)

        async def read(channel, timeout):
            assert channel == "stdin"
            return {"msg_type": "input_request", "parent_header": {}, "content": {"prompt": msgs.pop(0)}}
        self.harness = SimpleNamespace(lost=None, send=lambda ch, text: self.sent.append(text), read=read)

    async def exec(self, kernel, code, limit, **kw):
        data = {"status": "ok", "data": {"application/json": self.student_env}}
        return SimpleNamespace(state="ok", outputs=[], reply={"user_expressions": {"r": data}})

    def status(self, status, detail):
        self.statuses.append((status, detail))

    def harness_trouble(self, what):
        self.troubles.append(what)


def _relay(**kw) -> Relay:
    return Relay(_Pair(**kw))


def test_the_relay_passes_the_student_reply_on_unread_with_the_request_id():
    req = Request(op=Op.NAMES)
    text = protocol.to_text(Reply(id=req.id))
    relay = _relay(student_env={"text": text, "raised": None})
    got = protocol.parse(run_async(relay.forward(protocol.prompt(req), 5.0)), Relayed)
    assert got.id == req.id and got.text == text


@pytest.mark.parametrize("env", [None, {"r": "{}", "erro": None}, {"text": 3}])
def test_a_missing_or_malformed_envelope_is_a_grader_failure(env):
    req = Request(op=Op.NAMES)
    got = protocol.parse(run_async(_relay(student_env=env).forward(protocol.prompt(req), 5.0)), Failure)
    assert got.id == req.id and got.blame is Blame.GRADER


def test_the_relay_refuses_an_oversize_reply_before_reading_it(monkeypatch):
    monkeypatch.setattr(wire, "MAX_BYTES", 1000)
    monkeypatch.setattr(protocol, "MAX_BYTES", 1000)
    req = Request(op=Op.NAMES)
    big = '{"kind": "reply", "id": "' + "x" * 2000 + '"}'
    loads = json.loads
    seen = []
    monkeypatch.setattr(json, "loads", lambda s, *a, **k: (seen.append(len(s)), loads(s, *a, **k))[1])
    got = protocol.parse(run_async(_relay(student_env={"text": big}).forward(protocol.prompt(req), 5.0)), Failure)
    assert got.id == req.id and got.blame is Blame.STUDENT and "maior" in got.reason
    assert max(seen) < 1000, seen                 # só o pedido e a resposta curta foram lidos


def test_a_nested_request_during_a_callback_does_not_desynchronise_the_channel():
    """L2: durante um callback, o corretor pede algo ao aluno (um objeto do aluno passado a um
    método do corretor). O executor recusa o pedido aninhado (com o id dele), continua
    esperando e entrega ao aluno a resposta do callback, não a do pedido aninhado."""
    student_req = Request(op=Op.CALL, target=9)
    nested = Request(op=Op.CALL, target=1)
    reply = Reply(id=student_req.id, value=wire.encode(4))
    flag = Flag(reason="algo a revisar")
    relay = _relay(harness_msgs=[protocol.prompt(nested), protocol.prompt(flag), protocol.prompt(reply)])
    relay.pending_id = "pedido-do-corretor"
    out = run_async(relay.callback(protocol.prompt(student_req), 5.0))
    assert protocol.parse(out, Reply) == reply
    pair = relay.k
    cb = protocol.parse(pair.sent[0], Callback)
    assert cb.id == "pedido-do-corretor" and cb.text == protocol.to_text(student_req)
    refused = protocol.parse(pair.sent[1], Failure)
    assert refused.id == nested.id
    assert protocol.parse(pair.sent[2], Reply).id == flag.id and pair.outcome.flags and not pair.troubles


# ----------------------------------------------------------------------------- limite do socket (H6)

def test_a_message_over_the_socket_cap_cuts_the_channel_and_no_send_blocks(tmp_path):
    """H6: acima de MAXMSGSIZE o zmq corta a conexão e não reconecta; um envio depois disso
    esperaria para sempre. O kernel vê o corte (`channel_lost`) e `send` devolve None na hora."""
    ctx = zmq.Context()
    ctx.setsockopt(zmq.MAXMSGSIZE, 1000)
    server = zmq.Context.instance().socket(zmq.ROUTER)
    addr = f"ipc://{tmp_path}/shell"
    server.bind(addr)
    socks = {n: ctx.socket(zmq.DEALER) for n in ("shell", "iopub", "stdin")}
    kc = SimpleNamespace(context=ctx, execute=lambda *a, **k: pytest.fail("enviou a um canal cortado"),
                         **{f"{n}_channel": SimpleNamespace(socket=s) for n, s in socks.items()})
    k = SandboxKernel.__new__(SandboxKernel)
    k.kc, k.lost, k.exited, k._monitors = kc, None, False, []
    try:
        k._watch_channels()
        socks["shell"].connect(addr)
        socks["shell"].send(b"oi")
        ident, _ = server.recv_multipart()
        assert k.channel_lost() is None
        server.send_multipart([ident, b"x" * 5000])
        end = time.monotonic() + 5
        while k.channel_lost() is None and time.monotonic() < end:
            time.sleep(0.02)
        assert k.lost and "maior que" in k.lost and "shell" in k.lost, k.lost
        t0 = time.monotonic()
        assert k.send("shell", "1 + 1") is None
        assert time.monotonic() - t0 < 1.0
    finally:
        for _, mon in k._monitors:
            mon.close(linger=0)
        for s in (*socks.values(), server):
            s.close(linger=0)
        ctx.term()


# ----------------------------------------------------------------------------- mensagens do Jupyter

def _kernel_reading(outcome):
    """Um SandboxKernel sem processo cujo canal iopub devolve (ou levanta) `outcome`."""
    async def get_msg(timeout):
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome
    k = object.__new__(SandboxKernel)
    k.lost, k.exited = None, False
    k.kc = SimpleNamespace(iopub_channel=SimpleNamespace(get_msg=get_msg))
    return k


@pytest.mark.parametrize("outcome, why", [
    (RecursionError("maximum recursion depth exceeded while decoding a JSON array"), "RecursionError"),
    (ValueError("Invalid Signature"), "ValueError"),
    (KeyError("header"), "KeyError"),
    ({"msg_type": "display_data", "parent_header": [], "content": {}}, "não são objetos"),
    ({"msg_type": "display_data", "parent_header": {}, "content": "texto"}, "não são objetos"),
    ("nem um dicionário", "não são objetos"),
])
def test_a_message_the_client_cannot_read_is_the_kernels_fault(outcome, why):
    """Era uma exceção no processo de correção: a linha virava "erro do corretor", rode de novo."""
    k = _kernel_reading(outcome)
    assert run_async(k.read("iopub", 0)) is None
    assert k.lost.startswith("o kernel mandou uma mensagem fora do protocolo do Jupyter (canal iopub: ")
    assert why in k.lost


def test_a_well_formed_message_passes_and_an_empty_channel_is_empty():
    from queue import Empty
    msg = {"msg_type": "status", "parent_header": {"msg_id": "x"}, "content": {"execution_state": "idle"}}
    k = _kernel_reading(msg)
    assert run_async(k.read("iopub", 0)) is msg and k.lost is None
    with pytest.raises(Empty):
        run_async(_kernel_reading(Empty()).read("iopub", 0))
