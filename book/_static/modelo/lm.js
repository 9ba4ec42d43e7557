/* O modelo tiny do curso em JavaScript puro: o tokenizador BPE e o passo à frente (cap. 8).
 *
 * O mesmo modelo de atencao/model.py, conta por conta, lido de
 * _static/modelo/lm_manifest.json + lm_weights.bin (atencao/web_lm.py):
 *   x = embedding(ids)                                        (T, D)
 *   para cada bloco:  x += W_O · atenção(RoPE(W_Q h), RoPE(W_K h), W_V h),  h = RMSNorm(x)
 *                     x += W_2 (silu(W_1 h) * W_3 h),                       h = RMSNorm(x)
 *   logits = RMSNorm(x) · Eᵀ (a matriz de embeddings, quando atada)          (T, V)
 * RoPE com os pares (2i, 2i+1), ângulos em float64 arredondados para float32
 * (como rope_angles); GQA: a cabeça de consulta h lê a cabeça KV floor(h / G).
 * Os pesos são float32; as contas, em float64 (a diferença para o PyTorch em
 * float32 é o arredondamento do PyTorch, ~1e-6). A configuração vem do
 * manifesto: nada de tamanhos escritos aqui.
 *
 * Sem DOM: roda no navegador (window.AtencaoLM) e no Node (module.exports).
 */
(function (root) {
  "use strict";

  const FORMAT = "atencao-lm-f32-v1";

  // ------------------------------------------------------------------
  // Pré-tokenização: PY_PATTERN, a expressão de atencao/text.py, escrita como
  // um laço. As classes de caractere (0 letra, 1 dígito, 2 espaço, 3 o resto)
  // vêm do manifesto, calculadas pelo `re` do Python que construiu o livro: as
  // propriedades Unicode do navegador podem ser de outra versão do Unicode.
  // ------------------------------------------------------------------
  const PY_PATTERN = " ?[^\\W\\d_]+| ?\\d+| ?(?:[^\\s\\w]|_)+|\\s+(?!\\S)|\\s+";
  const LETTER = 0, DIGIT = 1, SPACE = 2;

  class CharClasses {
    constructor(runs) { // [início0, classe0, início1, classe1, ...], inícios crescentes a partir de 0
      if (runs.length < 2 || runs.length % 2 || runs[0] !== 0) throw new Error("tabela de classes inválida");
      this.starts = Int32Array.from({ length: runs.length / 2 }, (_, i) => runs[2 * i]);
      this.classes = Uint8Array.from({ length: runs.length / 2 }, (_, i) => runs[2 * i + 1]);
    }

    of(cp) { // busca binária do último trecho que começa em cp ou antes
      let lo = 0, hi = this.starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (this.starts[mid] <= cp) lo = mid; else hi = mid - 1;
      }
      return this.classes[lo];
    }
  }

  /** Os pedaços de `text`, como re.findall(PY_PATTERN, text) no Python. */
  function pretokenize(text, classes) {
    const cps = Array.from(text); // code points
    const cls = cps.map((ch) => classes.of(ch.codePointAt(0)));
    const n = cps.length, out = [];
    const runEnd = (i, k) => { while (i < n && cls[i] === k) i++; return i; };
    let p = 0;
    while (p < n) {
      let end;
      if (cps[p] === " " && p + 1 < n && cls[p + 1] !== SPACE) {
        end = runEnd(p + 1, cls[p + 1]); // " ?[L]+", " ?\d+" ou " ?(...)+" com o espaço na frente
      } else if (cls[p] !== SPACE) {
        end = runEnd(p, cls[p]); // as mesmas três, sem o espaço
      } else {
        end = runEnd(p, SPACE); // \s+(?!\S): o trecho de espaços menos o último, se um não-espaço vem depois
        if (end < n && end - p > 1) end -= 1;
      }
      out.push(cps.slice(p, end).join(""));
      p = end;
    }
    return out;
  }

  class Tokenizer {
    constructor(merges, charClasses, vocabSize) {
      this.classes = new CharClasses(charClasses);
      this.rank = new Map(); // (a, b) -> número da fusão
      this.vocab = []; // bytes de cada token
      for (let b = 0; b < 256; b++) this.vocab.push(Uint8Array.of(b));
      merges.forEach(([a, b], r) => {
        if (!(a >= 0 && a < 256 + r && b >= 0 && b < 256 + r)) {
          throw new Error(`fusão ${r} = (${a}, ${b}) usa um token que ainda não existe`);
        }
        this.rank.set(a * 65536 + b, r);
        const va = this.vocab[a], vb = this.vocab[b];
        const v = new Uint8Array(va.length + vb.length);
        v.set(va); v.set(vb, va.length);
        this.vocab.push(v);
      });
      if (vocabSize !== undefined && this.vocab.length !== vocabSize) {
        throw new Error(`o tokenizador tem ${this.vocab.length} tokens e o modelo, ${vocabSize}`);
      }
      this.cache = new Map();
      this.utf8 = new TextEncoder();
      this.text = new TextDecoder("utf-8", { fatal: false });
    }

    encodePiece(piece) {
      let ids = this.cache.get(piece);
      if (ids) return ids;
      ids = Array.from(this.utf8.encode(piece));
      while (ids.length > 1) {
        let best = Infinity, at = -1;
        for (let j = 0; j + 1 < ids.length; j++) { // a fusão de menor número; empate: a mais à esquerda
          const r = this.rank.get(ids[j] * 65536 + ids[j + 1]);
          if (r !== undefined && r < best) { best = r; at = j; }
        }
        if (at < 0) break;
        ids.splice(at, 2, 256 + best);
      }
      this.cache.set(piece, ids);
      return ids;
    }

    pretokens(text) {
      return pretokenize(text, this.classes);
    }

    encode(text) {
      const out = [];
      for (const piece of this.pretokens(text)) out.push(...this.encodePiece(piece));
      return out;
    }

    piece(id) { // o token como texto, com "�" nos bytes que não fecham um caractere (como pieces do Python)
      return this.text.decode(this.vocab[id]);
    }

    decode(ids) {
      const parts = ids.map((t) => this.vocab[t]);
      const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let k = 0;
      for (const p of parts) { all.set(p, k); k += p.length; }
      return this.text.decode(all);
    }
  }

  // ------------------------------------------------------------------
  // Modelo
  // ------------------------------------------------------------------
  function littleEndian() {
    return new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  }

  class Model {
    /** manifest: o objeto de lm_manifest.json; buffer: o ArrayBuffer de lm_weights.bin. */
    constructor(manifest, buffer) {
      if (manifest.format !== FORMAT) {
        throw new Error(`formato de pesos ${manifest.format}, este lm.js lê ${FORMAT}`);
      }
      if (manifest.pretokenization !== PY_PATTERN) {
        throw new Error("o tokenizador usa outra pré-tokenização: atualize a tradução em lm.js");
      }
      if (buffer.byteLength !== manifest.nbytes) {
        throw new Error(`lm_weights.bin tem ${buffer.byteLength} bytes, o manifesto diz ${manifest.nbytes}`);
      }
      if (!littleEndian()) throw new Error("este navegador não é little-endian");
      const c = (this.config = manifest.config);
      this.dK = c.d_model / c.n_heads;
      this.group = c.n_heads / c.n_kv_heads;
      this.tokenizer = new Tokenizer(manifest.merges, manifest.char_classes, c.vocab_size);
      this.vocabulary = new Set(manifest.vocabulary || []); // as palavras do treino (fração de conhecidas)
      const all = new Float32Array(buffer);
      this.w = new Map();
      for (const t of manifest.tensors) {
        if (t.shape.reduce((a, b) => a * b, 1) !== t.size) throw new Error(`forma inválida em ${t.name}`);
        this.w.set(t.name, { data: all.subarray(t.offset, t.offset + t.size), shape: t.shape });
      }
      const D = c.d_model, F = c.d_ff, Hq = c.n_heads * this.dK, Hkv = c.n_kv_heads * this.dK;
      this.expect("tok_emb.weight", [c.vocab_size, D]);
      this.expect("norm_f.weight", [D]);
      if (!c.tie_embeddings) this.expect("lm_head.weight", [c.vocab_size, D]);
      for (let l = 0; l < c.n_layers; l++) {
        const p = `blocks.${l}.`;
        this.expect(p + "norm1.weight", [D]);
        this.expect(p + "norm2.weight", [D]);
        this.expect(p + "attn.w_q.weight", [Hq, D]);
        this.expect(p + "attn.w_k.weight", [Hkv, D]);
        this.expect(p + "attn.w_v.weight", [Hkv, D]);
        this.expect(p + "attn.w_o.weight", [D, Hq]);
        this.expect(p + "mlp.w1.weight", [F, D]);
        this.expect(p + "mlp.w3.weight", [F, D]);
        this.expect(p + "mlp.w2.weight", [D, F]);
      }
      // RoPE: base^(-2i/d_k), i = 0 .. d_k/2 - 1, em float64 (atencao.model.rope_angles)
      this.invFreq = Float64Array.from({ length: this.dK / 2 }, (_, i) => c.rope_base ** (-(2 * i) / this.dK));
    }

    expect(name, shape) {
      const t = this.w.get(name);
      if (!t || t.shape.length !== shape.length || t.shape.some((s, i) => s !== shape[i])) {
        throw new Error(`o tensor ${name} deveria ter forma (${shape}), veio ${t ? `(${t.shape})` : "nada"}`);
      }
    }

    W(name) { return this.w.get(name).data; }

    /** y (T, out) = x (T, in) · Wᵀ, W (out, in) em linhas. */
    static linear(x, T, nIn, W, nOut) {
      const y = new Float64Array(T * nOut);
      for (let t = 0; t < T; t++) {
        const xo = t * nIn, yo = t * nOut;
        for (let o = 0; o < nOut; o++) {
          let s = 0;
          const wo = o * nIn;
          for (let i = 0; i < nIn; i++) s += x[xo + i] * W[wo + i];
          y[yo + o] = s;
        }
      }
      return y;
    }

    rmsnorm(x, T, weight) {
      const D = this.config.d_model, eps = this.config.norm_eps, y = new Float64Array(T * D);
      for (let t = 0; t < T; t++) {
        let ss = 0;
        for (let i = 0; i < D; i++) ss += x[t * D + i] * x[t * D + i];
        const inv = 1 / Math.sqrt(ss / D + eps);
        for (let i = 0; i < D; i++) y[t * D + i] = x[t * D + i] * inv * weight[i];
      }
      return y;
    }

    /** Gira, no lugar, as n cabeças de x (T, n·d_k): o par (2i, 2i+1) da posição t pelo ângulo t·invFreq[i]. */
    rope(x, T, n) {
      const dK = this.dK, half = dK / 2;
      for (let t = 0; t < T; t++) {
        for (let i = 0; i < half; i++) {
          const a = t * this.invFreq[i];
          const cos = Math.fround(Math.cos(a)), sin = Math.fround(Math.sin(a));
          for (let h = 0; h < n; h++) {
            const k = t * n * dK + h * dK + 2 * i;
            const x0 = x[k], x1 = x[k + 1];
            x[k] = x0 * cos - x1 * sin;
            x[k + 1] = x0 * sin + x1 * cos;
          }
        }
      }
    }

    /**
     * Passo à frente sobre ids (T inteiros). Devolve
     *   logits: Float64Array (T·V), a linha t prevê o token t + 1;
     *   attention: Float64Array (L·H·T·T), os pesos de cada camada e cabeça (zeros no futuro).
     */
    forward(ids) {
      const c = this.config, T = ids.length, D = c.d_model, V = c.vocab_size, F = c.d_ff;
      const H = c.n_heads, Hkv = c.n_kv_heads, dK = this.dK, G = this.group;
      if (T < 1) throw new Error("a frase precisa de pelo menos um token");
      for (const id of ids) {
        if (!(Number.isInteger(id) && id >= 0 && id < V)) throw new Error(`token ${id} fora de [0, ${V})`);
      }
      const emb = this.W("tok_emb.weight");
      const x = new Float64Array(T * D);
      ids.forEach((id, t) => { for (let i = 0; i < D; i++) x[t * D + i] = emb[id * D + i]; });
      const attention = new Float64Array(c.n_layers * H * T * T);
      const scale = 1 / Math.sqrt(dK);
      const row = new Float64Array(T);
      for (let l = 0; l < c.n_layers; l++) {
        const p = `blocks.${l}.`;
        let h = this.rmsnorm(x, T, this.W(p + "norm1.weight"));
        const q = Model.linear(h, T, D, this.W(p + "attn.w_q.weight"), H * dK); // (T, H·d_k)
        const k = Model.linear(h, T, D, this.W(p + "attn.w_k.weight"), Hkv * dK); // (T, Hkv·d_k)
        const v = Model.linear(h, T, D, this.W(p + "attn.w_v.weight"), Hkv * dK);
        this.rope(q, T, H);
        this.rope(k, T, Hkv);
        const mix = new Float64Array(T * H * dK); // (T, H·d_k): as cabeças concatenadas
        for (let hd = 0; hd < H; hd++) {
          const kv = Math.floor(hd / G);
          const base = ((l * H + hd) * T) * T;
          for (let i = 0; i < T; i++) {
            let mx = -Infinity;
            for (let j = 0; j <= i; j++) { // causal: só as chaves j <= i
              let s = 0;
              for (let d = 0; d < dK; d++) s += q[i * H * dK + hd * dK + d] * k[j * Hkv * dK + kv * dK + d];
              row[j] = s * scale;
              if (row[j] > mx) mx = row[j];
            }
            let sum = 0;
            for (let j = 0; j <= i; j++) { row[j] = Math.exp(row[j] - mx); sum += row[j]; }
            for (let j = 0; j <= i; j++) {
              const a = row[j] / sum;
              attention[base + i * T + j] = a;
              for (let d = 0; d < dK; d++) mix[i * H * dK + hd * dK + d] += a * v[j * Hkv * dK + kv * dK + d];
            }
          }
        }
        const out = Model.linear(mix, T, H * dK, this.W(p + "attn.w_o.weight"), D);
        for (let i = 0; i < T * D; i++) x[i] += out[i];
        h = this.rmsnorm(x, T, this.W(p + "norm2.weight"));
        const gate = Model.linear(h, T, D, this.W(p + "mlp.w1.weight"), F);
        const val = Model.linear(h, T, D, this.W(p + "mlp.w3.weight"), F);
        for (let i = 0; i < T * F; i++) gate[i] = (gate[i] / (1 + Math.exp(-gate[i]))) * val[i]; // silu · valor
        const mlp = Model.linear(gate, T, F, this.W(p + "mlp.w2.weight"), D);
        for (let i = 0; i < T * D; i++) x[i] += mlp[i];
      }
      const hf = this.rmsnorm(x, T, this.W("norm_f.weight"));
      const head = this.W(c.tie_embeddings ? "tok_emb.weight" : "lm_head.weight");
      const logits = Model.linear(hf, T, D, head, V);
      return { logits, attention, T, V, L: c.n_layers, H };
    }
  }

  /**
   * Um KV cache para gerar token a token: start() devolve o estado vazio e
   * step(estado, id) processa só o token novo (na posição estado.T), guarda a
   * sua chave e o seu valor e devolve os logits do próximo (Float64Array V).
   * As contas são as de forward, na mesma ordem: os logits batem com os da
   * última linha de forward(ids) (o teste confere).
   */
  Model.prototype.start = function start() {
    const c = this.config, n = c.n_kv_heads * this.dK;
    return { T: 0, k: Array.from({ length: c.n_layers }, () => []), v: Array.from({ length: c.n_layers }, () => []), n };
  };

  Model.prototype.step = function step(state, id) {
    const c = this.config, D = c.d_model, V = c.vocab_size, F = c.d_ff;
    const H = c.n_heads, Hkv = c.n_kv_heads, dK = this.dK, G = this.group, t = state.T;
    if (!(Number.isInteger(id) && id >= 0 && id < V)) throw new Error(`token ${id} fora de [0, ${V})`);
    const emb = this.W("tok_emb.weight");
    const x = Float64Array.from(emb.subarray(id * D, (id + 1) * D));
    const scale = 1 / Math.sqrt(dK), row = new Float64Array(t + 1);
    const girar = (vec, n) => { // a RoPE da posição t, como rope() faz na linha t
      for (let i = 0; i < dK / 2; i++) {
        const a = t * this.invFreq[i], cos = Math.fround(Math.cos(a)), sin = Math.fround(Math.sin(a));
        for (let h = 0; h < n; h++) {
          const k = h * dK + 2 * i, x0 = vec[k], x1 = vec[k + 1];
          vec[k] = x0 * cos - x1 * sin;
          vec[k + 1] = x0 * sin + x1 * cos;
        }
      }
    };
    for (let l = 0; l < c.n_layers; l++) {
      const p = `blocks.${l}.`;
      let h = this.rmsnorm(x, 1, this.W(p + "norm1.weight"));
      const q = Model.linear(h, 1, D, this.W(p + "attn.w_q.weight"), H * dK);
      const k = Model.linear(h, 1, D, this.W(p + "attn.w_k.weight"), Hkv * dK);
      const v = Model.linear(h, 1, D, this.W(p + "attn.w_v.weight"), Hkv * dK);
      girar(q, H);
      girar(k, Hkv);
      state.k[l].push(k);
      state.v[l].push(v);
      const ks = state.k[l], vs = state.v[l], mix = new Float64Array(H * dK);
      for (let hd = 0; hd < H; hd++) {
        const kv = Math.floor(hd / G);
        let mx = -Infinity;
        for (let j = 0; j <= t; j++) {
          let s = 0;
          for (let d = 0; d < dK; d++) s += q[hd * dK + d] * ks[j][kv * dK + d];
          row[j] = s * scale;
          if (row[j] > mx) mx = row[j];
        }
        let sum = 0;
        for (let j = 0; j <= t; j++) { row[j] = Math.exp(row[j] - mx); sum += row[j]; }
        for (let j = 0; j <= t; j++) {
          const a = row[j] / sum;
          for (let d = 0; d < dK; d++) mix[hd * dK + d] += a * vs[j][kv * dK + d];
        }
      }
      const out = Model.linear(mix, 1, H * dK, this.W(p + "attn.w_o.weight"), D);
      for (let i = 0; i < D; i++) x[i] += out[i];
      h = this.rmsnorm(x, 1, this.W(p + "norm2.weight"));
      const gate = Model.linear(h, 1, D, this.W(p + "mlp.w1.weight"), F);
      const val = Model.linear(h, 1, D, this.W(p + "mlp.w3.weight"), F);
      for (let i = 0; i < F; i++) gate[i] = (gate[i] / (1 + Math.exp(-gate[i]))) * val[i];
      const mlp = Model.linear(gate, 1, F, this.W(p + "mlp.w2.weight"), D);
      for (let i = 0; i < D; i++) x[i] += mlp[i];
    }
    state.T = t + 1;
    const hf = this.rmsnorm(x, 1, this.W("norm_f.weight"));
    return Model.linear(hf, 1, D, this.W(c.tie_embeddings ? "tok_emb.weight" : "lm_head.weight"), V);
  };

  /** Copia um estado do cache (as listas; os vetores guardados não mudam depois de escritos). */
  function copyState(state) {
    return { T: state.T, n: state.n, k: state.k.map((a) => a.slice()), v: state.v.map((a) => a.slice()) };
  }

  /**
   * As probabilidades de sorteio de uma linha de logits: softmax(logits / temperatura),
   * só entre os topK mais prováveis e, deles, só o menor conjunto cuja soma chega a topP
   * (o núcleo), renormalizado; o mais provável fica sempre. topK/topP nulos: sem esse corte.
   * É atencao.lm.filter_logits (empates na ordem: o menor índice primeiro).
   */
  function filterProbs(logits, temperature, topK, topP) {
    const p = softmax(logits, temperature);
    const order = Array.from(p.keys()).sort((a, b) => p[b] - p[a] || a - b);
    const out = new Float64Array(p.length);
    let before = 0, total = 0;
    for (let r = 0; r < order.length; r++) {
      const v = order[r];
      if (r > 0 && ((topK && r >= topK) || (topP !== null && topP !== undefined && before >= topP))) break;
      out[v] = p[v];
      before += p[v];
      total += p[v];
    }
    for (let i = 0; i < out.length; i++) out[i] /= total;
    return out;
  }

  /** Um gerador pseudoaleatório pequeno e determinístico (mulberry32): a mesma semente, os mesmos sorteios. */
  function rng(seed) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  /** Sorteia um índice de p (que soma 1) com u em [0, 1). */
  function draw(p, u) {
    let acc = 0, last = 0;
    for (let i = 0; i < p.length; i++) {
      if (p[i] > 0) { acc += p[i]; last = i; if (u < acc) return i; }
    }
    return last;
  }

  /**
   * n continuações de nNew tokens a partir de ids, com o KV cache: o começo passa uma vez
   * e cada continuação sorteia com filterProbs(temperatura, topK, topP) e o seu próprio
   * gerador (semente seed + k). Devolve [[ids novos], ...].
   */
  Model.prototype.sample = function sample(ids, nNew, n, opts) {
    const o = opts || {};
    if (!ids.length) throw new Error("o começo precisa de pelo menos um token");
    const base = this.start();
    let logits = null;
    for (const id of ids) logits = this.step(base, id);
    const out = [];
    for (let k = 0; k < n; k++) {
      const st = copyState(base), u = rng((o.seed || 0) + k), novos = [];
      let z = logits;
      for (let t = 0; t < nNew; t++) {
        const id = draw(filterProbs(z, o.temperature || 1, o.topK || null, o.topP ?? null), u());
        novos.push(id);
        if (t + 1 < nNew) z = this.step(st, id);
      }
      out.push(novos);
    }
    return out;
  };

  /** As palavras de um texto, em minúsculas (sequências de letras, como atencao.lm.vocabulary). */
  function words(text) {
    return (text.match(/[\p{L}\p{Nl}\p{No}]+/gu) || []).map((w) => w.toLowerCase());
  }

  /** [fração das palavras de text que estão em vocab (um Set), número de palavras]: atencao.lm.known_word_share. */
  function knownWordShare(text, vocab) {
    const ws = words(text);
    if (!ws.length) return [NaN, 0];
    return [ws.filter((w) => vocab.has(w)).length / ws.length, ws.length];
  }

  /** softmax(logits / temperatura) de uma linha, em float64. */
  function softmax(logits, temperature) {
    const t = temperature === undefined ? 1 : temperature;
    let mx = -Infinity;
    for (const z of logits) if (z / t > mx) mx = z / t;
    const p = Float64Array.from(logits, (z) => Math.exp(z / t - mx));
    const s = p.reduce((a, b) => a + b, 0);
    for (let i = 0; i < p.length; i++) p[i] /= s;
    return p;
  }

  /** Baixa manifesto e pesos (só quando chamada: o botão do leitor). */
  async function load(baseUrl) {
    const mres = await fetch(new URL("lm_manifest.json", baseUrl));
    if (!mres.ok) throw new Error(`lm_manifest.json: HTTP ${mres.status}`);
    const manifest = await mres.json();
    const wres = await fetch(new URL("lm_weights.bin", baseUrl));
    if (!wres.ok) throw new Error(`lm_weights.bin: HTTP ${wres.status}`);
    return new Model(manifest, await wres.arrayBuffer());
  }

  const api = { FORMAT, PY_PATTERN, LETTER, DIGIT, SPACE, pretokenize, Tokenizer, Model, softmax, load,
                filterProbs, rng, draw, words, knownWordShare };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.AtencaoLM = api;
})(typeof window !== "undefined" ? window : globalThis);
