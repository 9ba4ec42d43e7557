

# --- Placar: o que cada tarefa mostrou no "Run All" (só no Jupyter do aluno) ---
_PLACAR = {}            # número da tarefa -> [título, célula, seção do livro, estado, mensagem]
_TAREFA_ATUAL = [None]  # a tarefa cuja célula de testes está rodando
_AVISOS = {}            # número da tarefa -> avisos mostrados no placar (nomes do professor trocados)
_AVISADOS = set()       # na correção: nomes do professor que o notebook define, já avisados
# nome -> objeto que uma célula travada definiu (o mapeador põe `_travar(...)` no fim de cada uma);
# rodar a preparação de novo não esquece os nomes das células travadas que vêm depois dela
_TRAVADOS = globals().get("_TRAVADOS") if isinstance(globals().get("_TRAVADOS"), dict) else {}


def _travar(*nomes):
    """Última linha de toda célula travada (posta pelo mapeador): guarda os objetos que ela
    definiu. Na correção esses nomes são sempre os do corretor; no seu Jupyter, cada célula de
    testes confere que continuam os mesmos (`_nomes_do_professor`)."""
    g = globals()
    for nome in nomes:
        if nome in g:
            _TRAVADOS[nome] = g[nome]


def _celula_que_definiu(nome):
    """'a célula [N]' (o número de execução no Jupyter) que por último ligou `nome`, ou None."""
    try:
        import ast
        from IPython import get_ipython
        entradas = get_ipython().user_ns.get("In") or []
    except Exception:  # noqa: BLE001 - sem IPython (ou sem histórico): sem o número
        return None
    for i in range(len(entradas) - 1, 0, -1):
        texto = entradas[i]
        if nome not in texto or "_travar(" in texto or "_tarefa(" in texto:
            continue                      # as células travadas e as de testes são do professor
        try:
            arvore = ast.parse(texto)
        except SyntaxError:
            continue
        for no in ast.walk(arvore):
            if (isinstance(no, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and no.name == nome) \
                    or (isinstance(no, ast.Name) and no.id == nome and isinstance(no.ctx, (ast.Store, ast.Del))) \
                    or (isinstance(no, (ast.Import, ast.ImportFrom))
                        and any((a.asname or a.name.split(".")[0]) == nome for a in no.names)):
                return f"a célula [{i}]"
    return None


def _nomes_do_professor(n):
    """Uma célula sua trocou um nome de célula travada (o lançador, um oráculo, `conferir`)?

    Na correção, esses nomes são sempre os do corretor: a sua versão não conta. Para o seu
    Jupyter dar a mesma nota, o teste desfaz a troca (volta a versão do professor), avisa aqui e
    no placar, e segue julgando o resto do seu código."""
    corretor = _sys.modules.get("_autograder_harness")
    if corretor is not None:
        seus = sorted(set(getattr(corretor, "sources", None) or {}) & set(_TRAVADOS) - _AVISADOS)
        _AVISADOS.update(seus)                # uma vez por notebook, na primeira célula de testes
        for nome in seus:
            print(f"Aviso — o seu notebook define `{nome}`, que é de uma célula travada (do professor): "
                  "a correção usa sempre a do professor.")
        return
    g, avisos = globals(), []
    for nome, obj in list(_TRAVADOS.items()):
        if g.get(nome, _TRAVADOS) is obj:
            continue
        g[nome] = obj
        onde = _celula_que_definiu(nome) or "uma célula sua"
        avisos.append(f"{onde} redefiniu `{nome}`, que é do professor (de uma célula travada): este teste "
                      "usa a versão do professor, como a correção (a sua foi desfeita; se precisa de uma "
                      "função sua, dê outro nome a ela).")
    _AVISOS[n] = avisos
    for a in avisos:
        print(f"Aviso — Tarefa {n}: {a}")


def _tarefa(n, titulo, celula, secao):
    """Primeira linha de toda célula de testes (posta pelo mapeador): a tarefa n começou."""
    _PLACAR[n] = [titulo, celula, secao, "rodando", ""]
    _TAREFA_ATUAL[0] = n
    _ligar_placar()
    _nomes_do_professor(n)


def _visiveis_passaram(n):
    """Fim da parte visível de uma célula de testes."""
    if n in _PLACAR:
        _PLACAR[n][3] = "passou"
    print(f"Tarefa {n}: testes visíveis passaram.")


def _estado_do_erro(valor):
    original = getattr(valor, "original", valor)
    texto = str(valor)
    if isinstance(original, NotImplementedError) or "ainda não foi feita" in texto \
            or ("ainda tem o `raise NotImplementedError`" in texto):
        return "falta", ""
    primeira = (str(valor).strip().splitlines() or [type(valor).__name__])[0]
    return "falhou", primeira[:200]


def _depois_da_celula(resultado):
    n, _TAREFA_ATUAL[0] = _TAREFA_ATUAL[0], None
    if n is None or n not in _PLACAR:
        return
    erro = getattr(resultado, "error_in_exec", None)
    if erro is not None:
        if _PLACAR[n][3] == "passou":           # a parte visível passou; o resto (oculto) não
            _PLACAR[n][3], _PLACAR[n][4] = "falhou", str(erro).strip().splitlines()[0][:200] if str(erro).strip() else type(erro).__name__
        else:
            _PLACAR[n][3], _PLACAR[n][4] = _estado_do_erro(erro)
    elif _PLACAR[n][3] == "rodando":
        _PLACAR[n][3] = "passou"


def _quadros_do_aluno(tb, da_celula):
    """O traceback a partir do primeiro quadro do código do aluno (sem os do conferir; com
    `da_celula`, o traceback começa na própria célula de testes, e esse quadro sai também)."""
    import types

    quadros = []
    while tb is not None:
        f = tb.tb_frame
        if not f.f_locals.get("__tracebackhide__") and f.f_globals.get("__name__") != "contextlib":
            quadros.append(tb)
        tb = tb.tb_next
    if da_celula and len(quadros) > 1:
        quadros = quadros[1:]                                 # o 1º é a própria célula de testes
    novo = None
    for t in reversed(quadros):
        novo = types.TracebackType(novo, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return novo


def _ao_erro(shell, tipo, valor, tb, tb_offset=None):
    """Erros nas células de testes em português: 'ainda não feita' numa linha; um erro na função
    do aluno a partir da linha dele, sem a cadeia de tracebacks em inglês. A saída continua
    sendo um erro da célula (é por ele que o nbgrader vê que o teste falhou)."""
    n = _TAREFA_ATUAL[0]
    if n is None:
        shell.showtraceback((tipo, valor, tb), tb_offset=tb_offset)
        return None
    try:
        stb = _traceback_em_portugues(shell, n, tipo, valor, tb, tb_offset)
    except Exception:  # noqa: BLE001 - nunca esconder o erro do teste
        stb = shell.InteractiveTB.structured_traceback(tipo, valor, tb, tb_offset)
    shell._showtraceback(tipo, valor, stb)
    return None


def _traceback_em_portugues(shell, n, tipo, valor, tb, tb_offset):
    estado, _ = _estado_do_erro(valor)
    if estado == "falta":
        return [f"Tarefa {n}: ainda não feita. Complete a célula da sua função acima (apague o "
                "`raise NotImplementedError`), rode-a e depois rode esta célula de novo."]
    original, da_celula = getattr(valor, "original", None), False
    if original is None and not isinstance(valor, AssertionError):
        original, da_celula = valor, True
        valor = FalhaNoTeste(f"Tarefa {n}: sua função levantou {type(original).__name__}: {original}")
    if original is not None:
        return shell.InteractiveTB.structured_traceback(
            FalhaNoTeste, valor, _quadros_do_aluno(original.__traceback__, da_celula))
    if hasattr(valor, "_render_traceback_"):
        return valor._render_traceback_()
    return shell.InteractiveTB.structured_traceback(tipo, valor, tb, tb_offset)


def _ligar_placar():
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None or _sys.modules.get("_autograder_harness") is not None:
        return
    antigo = getattr(shell, "_placar_do_curso", None)
    if antigo is not None:
        try:
            shell.events.unregister("post_run_cell", antigo)
        except ValueError:
            pass
    shell.events.register("post_run_cell", _depois_da_celula)
    shell._placar_do_curso = _depois_da_celula
    shell.set_custom_exc((Exception,), _ao_erro)


def _sem_tex(titulo):
    """O título da tarefa sem TeX cru (o placar é texto puro): `$T \\times T$` vira T × T."""
    import re
    trocas = {r"\times": "×", r"\cdot": "·", r"\ell": "ℓ", r"\le": "≤", r"\ge": "≥", r"\to": "→",
              r"\alpha": "α", r"\tau": "τ", r"\sqrt": "√", r"\sum": "Σ", r"\infty": "∞", r"\,": " "}
    def limpa(m):
        t = m.group(1)
        t = re.sub(r"\\(?:mathrm|text|mathbf|operatorname)\{([^{}]*)\}", r"\1", t)
        t = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2", t)
        for tex, txt in sorted(trocas.items(), key=lambda kv: -len(kv[0])):
            t = re.sub(re.escape(tex) + r"(?![A-Za-z])", txt, t)
        t = re.sub(r"[_^]\{([^{}]*)\}", r"\1", t).replace("_", "").replace("^", "").replace("{", "").replace("}", "")
        return re.sub(r"\s+", " ", t).strip()
    return re.sub(r"\$\$?([^$]+)\$\$?", limpa, titulo)


def placar():
    """Tarefa por tarefa: passou nos testes visíveis, falhou (com a 1ª mensagem) ou ainda falta."""
    if not _PLACAR:
        print("Placar: nenhuma célula de testes rodou ainda. Use Run All (Kernel → Restart Kernel and Run All).")
        return
    simbolo = {"passou": "✅ passou nos testes visíveis", "falhou": "❌ falhou", "falta": "⬜ ainda não feita",
               "rodando": "❔ não terminou"}
    print("Placar (testes visíveis; na correção rodam também os ocultos)\n")
    for n in sorted(_PLACAR):
        titulo, celula, secao, estado, msg = _PLACAR[n]
        nome = _sem_tex(titulo).strip() or f"testes de `{celula}`"    # o desafio do cap. 13 não tem título
        print(f"Tarefa {n} — {nome}: {simbolo.get(estado, estado)}")
        if estado == "falhou" and msg:
            print(f"    primeira mensagem: {msg}")
        for aviso in _AVISOS.get(n, ()):
            print(f"    ⚠ {aviso}")
        if estado != "passou":
            print(f"    célula de testes `{celula}` (logo abaixo do enunciado da tarefa {n}); no livro: {secao}")
    feitas = sum(1 for v in _PLACAR.values() if v[3] == "passou")
    print(f"\n{feitas} de {len(_PLACAR)} tarefas com os testes visíveis passando.")
