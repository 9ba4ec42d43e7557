

# --- Regras de COMO calcular, comuns aos cadernos (vêm depois das funções de conferência) ---
class _OperacoesUsadas(_Observador):
    """Uma regra que anota as operações do torch que a sua função não podia usar (`self.usadas`)
    e falha com `mensagem(lista)`; o nome do caso fica no corretor (pode ser de um teste oculto)."""

    def relatorio(self):
        return {"usadas": list(self.usadas)}

    def verificar(self, relatorio):
        usadas = relatorio["usadas"]
        if not isinstance(usadas, list):
            raise TypeError("relatório malformado")
        if usadas:
            caso = f"{self.nome}: " if self.nome else ""
            raise FalhaNoTeste(caso + self.mensagem(", ".join(f"`{u}`" for u in map(str, usadas))))


class _SoPermitidas(_OperacoesUsadas):
    """Só as operações de uma lista: as contas que a tarefa pede que você escreva à mão.

    Serve onde a ideia da tarefa é justamente a conta (a softmax estável, o logsumexp, o
    jacobiano): em vez de proibir nomes (sempre sobra um: `logcumsumexp`, `logaddexp`...),
    a regra diz o que pode. Entram as operações elementares (aritmética, exp e log,
    comparações, máximo e soma, produtos de matrizes, visões, criação e cópia de tensores);
    uma tarefa pode somar outras com `extras`. O que ficar de fora é apontado pelo nome."""

    BASE = frozenset((
        # aritmética e funções elementares
        "add", "sub", "mul", "div", "neg", "reciprocal", "pow", "sqrt", "rsqrt", "abs", "sign",
        "exp", "exp2", "log", "log2", "clamp", "clamp_min", "clamp_max", "maximum", "minimum",
        "fmax", "fmin", "square", "rsub", "true_divide", "floor_divide", "remainder", "floor", "ceil",
        # comparações, máscaras e casos especiais
        "eq", "ne", "lt", "le", "gt", "ge", "where", "masked_fill", "isinf", "isnan", "isfinite",
        "isneginf", "isposinf", "nan_to_num", "logical_and", "logical_or", "logical_not",
        "logical_xor", "bitwise_and", "bitwise_or", "bitwise_not", "bitwise_xor", "all", "any",
        # reduções simples (o máximo e a soma são a matéria-prima da conta)
        "sum", "amax", "amin", "max", "min", "argmax", "argmin", "mean", "count_nonzero",
        # produtos
        "mm", "bmm", "matmul", "dot", "mv", "addmm", "outer",
        # visões, índices e cópias
        "view", "unsafe_view", "reshape", "expand", "unsqueeze", "squeeze", "transpose", "t",
        "permute", "select", "slice", "index", "index_select", "gather", "narrow", "cat", "stack",
        "split", "split_with_sizes", "chunk", "unbind", "clone", "copy", "detach", "alias",
        "to_copy", "contiguous", "as_strided", "flip", "index_put", "masked_select", "movedim",
        "diagonal", "diag", "diag_embed", "eye", "triu", "tril", "expand_as", "repeat",
        # criação de tensores
        "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
        "full_like", "fill", "zero", "arange", "scalar_tensor", "lift_fresh", "lift_fresh_copy",
        "local_scalar_dense", "new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided",
        "resize", "set", "item", "linspace", "log1p", "expm1",
    ))

    def __init__(self, nome="", extras=()):
        super().__init__(nome, tuple(extras))
        self.nome, self.extras = nome, tuple(extras)
        self.usadas = []

    def argumentos(self):
        return ("", self.extras)        # o nome do caso fica no corretor (pode ser de um teste oculto)

    def ver(self, func, args, kwargs):
        nome = func.__name__.split(".")[0]
        if _torch._C._current_graph_task_id() != -1:
            nome = "autograd (backward)"
        elif nome.strip("_") in self.BASE or nome.strip("_") in self.extras:
            return
        if nome not in self.usadas and len(self.usadas) < 20:
            self.usadas.append(nome)

    @staticmethod
    def mensagem(lista):
        return (f"use a sua própria conta: a sua função usou {lista}, fora das operações desta tarefa "
                "(aritmética, exp e log, comparações, máximo e soma, produtos de matrizes, visões e "
                "cópias). A ideia aqui é escrever essa conta você mesmo.")


def _so_permitidas(nome="", *extras):
    """`with _so_permitidas("caso"):` só deixa passar as operações elementares (e `extras`)."""
    return _SoPermitidas(nome, extras)


from torch.overrides import TorchFunctionMode as _ModoDeFuncoes


class _VigiaDeFuncoes(_ModoDeFuncoes):
    """Vê as funções do torch pelo nome com que foram chamadas (antes de o torch decompô-las:
    o SDPA em 3 dimensões ou em float64 vira bmm e softmax, e o despacho não o vê)."""

    def __init__(self, dono):
        super().__init__()
        self.dono = dono

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.dono.ver_funcao(getattr(func, "__name__", ""))
        return func(*args, **(kwargs or {}))


class _VigiaPelosNomes:
    """Mistura: quem vigia as operações também vê as funções pelo nome (`ver_funcao`)."""

    def iniciar(self):
        super().iniciar()
        self._vigia = _VigiaDeFuncoes(self)
        self._vigia.__enter__()

    def parar(self):
        self._vigia.__exit__(None, None, None)
        super().parar()


class _sem_atencao_pronta(_VigiaPelosNomes, _sem_atalhos):  # noqa: N801 - usada como `with _sem_atencao_pronta():`
    """Proíbe só as atenções prontas do torch (F.scaled_dot_product_attention, F.multi_head_attention_forward
    e o nn.MultiheadAttention, que usa uma delas): aqui a softmax do torch é permitida, a atenção você escreve."""

    PROIBIDAS = ("scaled_dot_product", "flash_attention", "efficient_attention", "cudnn_attention",
                 "multi_head_attention", "transformer_encoder_layer")

    def ver(self, func, args, kwargs):
        if _torch._C._current_graph_task_id() == -1:      # o autograd é permitido aqui
            super().ver(func, args, kwargs)

    def ver_funcao(self, nome):
        if any(p in nome for p in self.PROIBIDAS):
            if nome not in self.usadas:
                self.usadas.append(nome)
            raise AssertionError(self._mensagem(self.usadas))


    @staticmethod
    def _mensagem(usadas):
        return ("escreva a atenção você mesmo: a sua função usou " + ", ".join(f"`{u}`" for u in usadas)
                + " (F.scaled_dot_product_attention e nn.MultiheadAttention são os oráculos dos "
                  "testes, fora desta tarefa).")


class _ContaOperacoes(_Observador):
    """Conta as operações do torch feitas pela sua função (para comparar o trabalho entre
    entradas: um laço sobre as cabeças ou as posições faz o número crescer com elas)."""

    def __init__(self):
        super().__init__()
        self.total = 0

    def relatorio(self):
        return {"operacoes": self.operacoes}

    def verificar(self, relatorio):
        n = relatorio["operacoes"]
        if type(n) is not int or n < 0:
            raise TypeError("relatório malformado")
        self.total += n


def _sem_nomes(nome, f, proibidos, motivo):
    """Regra de texto (onde o despacho do torch não vê): nenhum dos `proibidos` no código da sua
    função nem no das funções suas que ela usa."""
    __tracebackhide__ = True
    import re as _re

    texto = _fonte(f)
    achados = [p for p in proibidos if _re.search(r"\b" + _re.escape(p) + r"\b", texto)]
    if achados:
        raise FalhaNoTeste(f"{nome}: a sua função usa {', '.join(f'`{a}`' for a in achados)}; {motivo}")


# --- Capítulos 6 e 7 (multi-cabeça e bloco transformer): contas que não crescem; funções prontas pelo nome ---
class _ContaContas(_ContaOperacoes):
    """Conta só as CONTAS do torch (produtos, somas, exp, softmax, máscaras, senos...), não as
    operações que só movem ou criam dados (visões, fatias, cópias, cat/stack, zeros/arange).

    Por quê: um laço que só separa ou junta pedaços (dividir as cabeças com uma compreensão,
    permitido na tarefa que o pede) não faz conta nenhuma por cabeça; um laço que faz a atenção,
    a rotação ou a máscara por cabeça ou por posição faz o número de contas crescer. E o total
    de operações muda sem laço nenhum: um `reshape` é uma visão ou uma cópia conforme a forma
    (com uma cabeça só, por exemplo), o que a contagem das contas não vê."""

    MOVIMENTO = frozenset((
        # visões, fatias e formas
        "view", "unsafe_view", "reshape", "reshape_alias", "expand", "expand_as", "unsqueeze", "squeeze",
        "transpose", "t", "permute", "select", "slice", "narrow", "split", "split_with_sizes", "chunk",
        "unbind", "movedim", "flatten", "unflatten", "alias", "as_strided", "detach", "diagonal",
        "view_as_real", "view_as_complex", "unfold",
        # cópias, juntar e índices
        "stack", "cat", "clone", "copy", "to_copy", "contiguous", "index", "index_select", "gather",
        "index_put", "masked_select", "repeat", "repeat_interleave", "flip", "roll",
        # criação de tensores
        "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
        "full_like", "fill", "zero", "arange", "linspace", "scalar_tensor", "lift_fresh", "lift_fresh_copy",
        "new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided", "local_scalar_dense",
        "resize", "set", "item",
    ))

    def __init__(self):
        super().__init__()
        self.contas = 0

    def ver(self, func, args, kwargs):
        if func.__name__.split(".")[0].strip("_") not in self.MOVIMENTO:
            self.contas += 1

    def relatorio(self):
        return {"operacoes": self.contas}


def _contas_nao_crescem(nome, com_o_que, chamadas):
    """Falha se o número de contas do torch (`_ContaContas`) muda entre as chamadas, que diferem
    só em `com_o_que` (as cabeças, as posições...). Um laço em Python sobre isso, escrito com
    `for`, `map`, recursão ou o que for, faz o número crescer; a versão vetorizada faz as mesmas.
    Devolve os resultados, na ordem."""
    __tracebackhide__ = True
    contagens, resultados = [], []
    for rotulo, f, args, kwargs in chamadas:
        with _ContaContas() as conta:
            resultados.append(_chamar(f"{nome} com {rotulo}", f, *args, **kwargs))
        contagens.append((rotulo, conta.total))
    if len({n for _, n in contagens}) > 1:
        lista = "; ".join(f"{rotulo}: {n}" for rotulo, n in contagens)
        raise FalhaNoTeste(
            f"{nome}: o número de contas do torch (aritmética, produtos, exp, cos, softmax, máscaras; "
            f"visões e cópias não entram) mudou com {com_o_que} ({lista}): há um laço em Python sobre "
            f"{com_o_que} fazendo contas. Faça as contas de uma vez, com operações sobre o tensor inteiro.")
    return resultados


class _sem_norma_pronta(_sem_atencao_pronta):  # noqa: N801 - usada como `with _sem_norma_pronta():`
    """Proíbe a RMSNorm pronta do torch (torch.nn.RMSNorm, F.rms_norm, torch.rms_norm), vista pelo
    nome da função chamada: no despacho ela se decompõe em pow, mean e rsqrt e não deixa rastro."""

    PROIBIDAS = ("rms_norm", "RMSNorm")

    @staticmethod
    def _mensagem(usadas):
        return ("escreva a RMSNorm você mesmo: a sua função usou " + ", ".join(f"`{u}`" for u in usadas)
                + " (torch.nn.RMSNorm e F.rms_norm são os gabaritos dos testes, fora desta tarefa).")


def _inteiro_exato(nome, obtido, esperado):
    """Uma contagem exata: `obtido` tem de ser um int do Python igual a `esperado` (sem float no
    caminho: com números de 30 dígitos, um float já perde os últimos)."""
    __tracebackhide__ = True

    def br(n):
        return f"{n:,}".replace(",", ".")
    if obtido is None:
        raise FalhaNoTeste(f"{nome}: sua função devolveu None. Faltou um `return`?")
    if type(obtido) is not int:
        raise FalhaNoTeste(f"{nome}: devolva um int do Python; veio {type(obtido).__name__} {obtido!r:.60}.")
    if obtido != esperado:
        raise FalhaNoTeste(f"{nome}: esperava {br(esperado)}, veio {br(obtido)} (diferença de "
                           f"{br(obtido - esperado)}).")


# --- Caps. 4 e 12: a conta à mão, sem cobrar de novo a sua função de uma tarefa anterior ---
import torch.autograd.forward_ad as _ad_direto


class _ContasAnotadas(_VigiaPelosNomes, _SoPermitidas):
    """A lista de `_so_permitidas`, mas sem falhar sozinha: anota o que a sua função usou fora
    dela (a derivada pronta também no modo direto: `jacfwd`, `jvp`, `forward_ad`; a conta levada
    para o NumPy), e quem decide é `_conta_a_mao`."""

    def __init__(self, nome="", extras=()):
        super().__init__(nome, extras)
        self.fora = []

    def ver(self, func, args, kwargs):
        if _ad_direto._current_level != -1:                 # dentro de um nível de derivada direta
            if "autograd (modo direto)" not in self.usadas:
                self.usadas.append("autograd (modo direto)")
            return
        super().ver(func, args, kwargs)

    SAIDAS = {"numpy": "numpy() (a conta sai do torch)", "__array__": "NumPy (a conta sai do torch)",
              "tolist": "tolist() (a conta sai do torch)"}

    def ver_funcao(self, nome):
        """Pelo nome da função do torch: o despacho não vê a conta feita no NumPy."""
        saida = self.SAIDAS.get(nome)
        if saida is not None and saida not in self.usadas and len(self.usadas) < 20:
            self.usadas.append(saida)


    def verificar(self, relatorio):
        usadas = relatorio["usadas"]
        if not isinstance(usadas, list):
            raise TypeError("relatório malformado")
        self.fora += [u for u in map(str, usadas) if u not in self.fora]


_CONTAS_AVISADAS = set()


def _conta_a_mao(nome, f, *args, extras=(), anterior=None, **kwargs):
    """Chama a sua função `f` só com as operações elementares (e `extras`) e devolve o resultado.

    `anterior = (rótulo, g, args_g, kwargs_g)`: a sua função de uma tarefa anterior, que `f` pode
    usar (a sua softmax dentro da jacobiana). O que `g` sozinha, com esses dados, já usa fora da
    lista é cobrado na tarefa dela, não de novo aqui (o autograd nunca é desculpado)."""
    __tracebackhide__ = True
    regra = _ContasAnotadas("", tuple(extras))
    with regra:
        resultado = _chamar(nome, f, *args, **kwargs)
    fora = list(regra.fora)
    if fora and anterior is not None:
        rotulo, g, args_g, kwargs_g = anterior
        dela = _ContasAnotadas("", tuple(extras))
        try:
            with dela:
                g(*args_g, **kwargs_g)
        except Exception:  # noqa: BLE001 - a função anterior nem roda: nada a descontar
            pass
        descontadas = [u for u in fora if u in dela.fora and "autograd" not in u and "backward" not in u]
        fora = [u for u in fora if u not in descontadas]
        aviso = (nome.split(" ")[0], rotulo, tuple(descontadas))
        if descontadas and not fora and aviso not in _CONTAS_AVISADAS:   # uma vez por função
            _CONTAS_AVISADAS.add(aviso)
            print(f"{nome}: {', '.join(f'`{u}`' for u in descontadas)} vem da sua {rotulo}, que ainda usa "
                  "isso (veja aquela tarefa); aqui não conta de novo.")
    if fora:
        _SoPermitidas(nome, tuple(extras)).verificar({"usadas": fora})
    return resultado



# --- Caps. 1 e 3: laços que fazem a conta (cap. 1) e máscara sem triu/tril (cap. 3) ---
class _ContaProdutos(_Observador):
    """Conta as multiplicações `*` que o código Python das suas funções faz durante a chamada.

    Um laço que faz a conta multiplica ao menos uma vez por par (i, j) (Q[i, t] * K[j, t] ou
    Q[i] * K[j]); um laço de enfeite ao lado de um produto pronto ou de uma difusão não. Vale
    para NumPy e para torch (a contagem é das instruções `*` executadas, não de uma biblioteca)."""

    def __init__(self, nome="", minimo=0):
        super().__init__(nome, minimo)
        self.nome, self.minimo = nome, minimo
        self.produtos = self.instrucoes = 0

    def argumentos(self):
        return ("", self.minimo)        # o nome do caso fica no corretor (pode ser de um teste oculto)

    def iniciar(self):
        import dis

        if "BINARY_OP" in dis.opmap:    # Python 3.11 em diante: BINARY_OP com o número da operação
            nomes = [n for n, _ in dis._nb_ops]
            self._op = dis.opmap["BINARY_OP"]
            self._args = {nomes.index("NB_MULTIPLY"), nomes.index("NB_INPLACE_MULTIPLY")}
        else:                           # até o 3.10: uma instrução para cada operação
            self._op, self._args = None, {dis.opmap["BINARY_MULTIPLY"], dis.opmap["INPLACE_MULTIPLY"]}
        self._ns = globals()            # as funções do notebook (as suas) vivem aqui
        self._proprios = {f.__code__ for c in type(self).__mro__ for f in vars(c).values()
                          if hasattr(f, "__code__")}     # as desta regra não contam
        self._antes = _sys.gettrace()
        super().iniciar()
        _sys.settrace(self._chamada)

    def parar(self):
        _sys.settrace(self._antes)
        super().parar()

    def _chamada(self, quadro, evento, arg):
        if quadro.f_globals is not self._ns or quadro.f_code in self._proprios:
            return None                 # código de bibliotecas (e desta regra): não conta
        quadro.f_trace_opcodes = True
        quadro.f_trace_lines = False
        return self._instrucao

    def _instrucao(self, quadro, evento, arg):
        if evento == "opcode":
            self.instrucoes += 1
            codigo, i = quadro.f_code.co_code, quadro.f_lasti
            if self._op is None:
                if codigo[i] in self._args:
                    self.produtos += 1
            elif codigo[i] == self._op and codigo[i + 1] in self._args:
                self.produtos += 1
        return self._instrucao

    def relatorio(self):
        return {"produtos": self.produtos, "instrucoes": self.instrucoes}

    def verificar(self, relatorio):
        produtos, instrucoes = relatorio["produtos"], relatorio["instrucoes"]
        if type(produtos) is not int or produtos < 0 or type(instrucoes) is not int or instrucoes < 0:
            raise TypeError("relatório malformado")
        self.produtos, self.instrucoes = produtos, instrucoes
        if produtos < self.minimo:
            raise FalhaNoTeste(
                f"{self.nome}: os seus laços fizeram {produtos} multiplicaç{'ão' if produtos == 1 else 'ões'} `*` "
                f"para {self.minimo} pares (i, j); a conta tem de passar pelos laços, com ao menos um produto "
                "Q[i, ...] * K[j, ...] para cada par. Um laço que não faz a conta, ao lado de um produto pronto "
                "ou de uma difusão somada, não vale.")


def _sem_laco_python(nome, com_o_que, chamadas):
    """Falha se o número de instruções Python executadas pelas suas funções muda entre as chamadas
    (que diferem só em `com_o_que`): um laço em Python sobre o lote ou as posições, em NumPy ou em
    torch, faz esse número crescer; a versão vetorizada executa as mesmas. `chamadas`: lista de
    (rótulo, f, args). Devolve os resultados, na ordem."""
    __tracebackhide__ = True
    contagens, resultados = [], []
    for rotulo, f, args in chamadas:
        with _ContaProdutos(f"{nome} com {rotulo}", 0) as conta:
            resultados.append(_chamar(f"{nome} com {rotulo}", f, *args))
        contagens.append((rotulo, conta.instrucoes))
    if len({n for _, n in contagens}) > 1:
        lista = "; ".join(f"{rotulo}: {n}" for rotulo, n in contagens)
        raise FalhaNoTeste(
            f"{nome}: o número de instruções Python executadas mudou com {com_o_que} ({lista}): há um laço "
            f"em Python sobre {com_o_que}. Trate tudo de uma vez, com operações sobre o array inteiro.")
    return resultados


class _SemTriangular(_OperacoesUsadas):
    """Proíbe torch.triu/torch.tril (e triu_indices/tril_indices): a máscara vem da comparação de índices."""

    def __init__(self, nome=""):
        super().__init__(nome)
        self.nome = nome
        self.usadas = []

    def argumentos(self):
        return ("",)                    # o nome do caso fica no corretor (pode ser de um teste oculto)

    def ver(self, func, args, kwargs):
        nome = func.__name__.split(".")[0].strip("_")
        if nome.startswith(("triu", "tril")) and nome not in self.usadas:
            self.usadas.append(nome)

    @staticmethod
    def mensagem(lista):
        return (f"a sua função usou {lista}; aqui a máscara vem da comparação dos índices (j > start + i), "
                "sem torch.triu/torch.tril (são o oráculo dos testes).")
