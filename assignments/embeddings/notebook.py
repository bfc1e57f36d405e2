# %% [markdown]
# # Lab: word embeddings from counts
#
# This notebook runs **your** `embeddings.py` on the course's templated corpus. Fill in a
# function in `embeddings.py`, re-run the cells (Kernel > Restart & Run All picks up your
# edits), and look at the check after each part.
#
# | part | your function |
# | --- | --- |
# | 1. One-hot vectors know nothing | `one_hot` |
# | 2. The company a word keeps | `cooccurrence` |
# | 3. From counts to PPMI | `ppmi` |
# | 4. Compressing with the SVD | `svd_embeddings` |
# | 5. Similar words, as a heatmap and a map | `cosine_similarity`, `nearest` |
# | 6. king − man + woman | `analogy` |
# | 7. One vector for two senses of "bank" | all of them |

# %%
import embeddings as em
import matplotlib.pyplot as plt
import numpy as np


def todo(exc):
    """What to print when a function is not written yet."""
    print(f"Not implemented yet: {exc}. Fill it in in embeddings.py, then re-run this cell.")


corpus = em.course_corpus()
vocab = em.build_vocab(corpus)
idx = em.word_index(vocab)
print(len(corpus), "sentences,", len(vocab), "distinct words; the first sentences of two templates:")
print(" ", " ".join(corpus[0]))
print(" ", " ".join(corpus[-1]))

# %% [markdown]
# ## 1. One-hot vectors know nothing
#
# A one-hot vector has a 1 at the word's index and 0 elsewhere. Every pair of distinct one-hot
# vectors is orthogonal, so "king" is as far from "queen" as from "bread". And an embedding
# layer is just a lookup, which equals one-hot times a weight matrix.

# %%
try:
    X = em.one_hot([idx["king"], idx["queen"], idx["bread"]], len(vocab))
    print("shape:", X.shape, " dtype:", X.dtype)
    print("king.queen =", X[0] @ X[1], "  king.bread =", X[0] @ X[2], " <- no notion of similarity")
    W = np.random.default_rng(0).standard_normal((len(vocab), 4))
    print("one_hot @ W equals the lookup W[ids]:", np.allclose(X @ W, W[[idx["king"], idx["queen"], idx["bread"]]]))
    V, d = 50_000, 300
    print(f"a {V:,}-word vocabulary with {d}-dimensional embeddings: {V * d:,} parameters")
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: one_hot

# %% [markdown]
# ## 2. The company a word keeps
#
# `C[w, c]` counts how often c appears within `window` words on either side of w, inside one
# sentence. The course uses a window of 6. Look at the rows of a few words: king and prince
# have identical rows (identical sentences), king and queen differ only in "he"/"she".

# %%
C = None
try:
    C = em.cooccurrence(corpus, vocab, 6)
    print("C:", C.shape, " total count:", C.sum(), " symmetric:", np.allclose(C, C.T))
    show = ["king", "prince", "queen", "bank"]
    cols = ["he", "she", "crown", "river", "money", "market"]
    print(f"{'':8s}" + "".join(f"{c:>8s}" for c in cols))
    for w in show:
        print(f"{w:8s}" + "".join(f"{C[idx[w], idx[c]]:8.0f}" for c in cols))
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: cooccurrence

# %% [markdown]
# ## 3. From counts to PPMI
#
# `PPMI[w, c] = max(ln(P(w, c) / (P(w) P(c))), 0)`: how much more often than chance w and c
# appear together. "the" co-occurs with everything, so its PPMI with any word is small even
# though its counts are the largest.

# %%
P = None
try:
    if C is None:
        raise NotImplementedError("cooccurrence is needed first")
    P = em.ppmi(C)
    print("PPMI:", P.shape, " min:", P.min(), " max:", round(P.max(), 3), " finite:", np.isfinite(P).all())
    for w in ["crown", "the"]:
        print(f"count(king, {w}) = {C[idx['king'], idx[w]]:4.0f}   PPMI(king, {w}) = {P[idx['king'], idx[w]]:.3f}")
    print("an all-zero matrix gives:", em.ppmi(np.zeros((2, 2))).tolist())
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: ppmi

# %% [markdown]
# ## 4. Compressing with the SVD
#
# `E = U[:, :k] * sqrt(S[:k])`, rows scaled to length 1, with k = 8 as in the course.
# The singular values show how much each direction explains.

# %%
E = None
try:
    if P is None:
        raise NotImplementedError("ppmi is needed first")
    E = em.svd_embeddings(P, 8)
    lengths = np.linalg.norm(E, axis=1)
    print("E:", E.shape, f" row lengths between {lengths.min():.6f} and {lengths.max():.6f}")
    S = np.linalg.svd(P, compute_uv=False)
    plt.figure(figsize=(6, 3))
    plt.bar(range(1, len(S) + 1), S, color=["C0"] * 8 + ["lightgray"] * (len(S) - 8))
    plt.xlabel("singular direction")
    plt.ylabel("singular value")
    plt.title("PPMI spectrum: the 8 kept directions in blue")
    plt.tight_layout()
    plt.show()
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: svd_embeddings

# %% [markdown]
# ## 5. Similar words, as a heatmap and a map
#
# Cosine similarity between all pairs of content words (stop words left out of the picture,
# though they stay in the counts). The course measured king~prince 1.0, king~queen 0.997,
# king~woman 0.374 and king~bread 0.316.

# %%
content = list(dict.fromkeys(w for s in corpus for w in s if w not in em.COURSE_STOP_WORDS))  # by topic
try:
    if E is None:
        raise NotImplementedError("svd_embeddings is needed first")
    for a, b in [("king", "prince"), ("king", "queen"), ("king", "woman"), ("king", "bread")]:
        print(f"cosine({a}, {b}) = {em.cosine_similarity(E[idx[a]], E[idx[b]]):.3f}")
    sims = np.array([[em.cosine_similarity(E[idx[a]], E[idx[b]]) for b in content] for a in content])
    plt.figure(figsize=(7, 6))
    plt.imshow(sims, cmap="RdBu_r", vmin=-1, vmax=1)
    plt.xticks(range(len(content)), content, rotation=90)
    plt.yticks(range(len(content)), content)
    plt.colorbar(label="cosine similarity")
    plt.title("cosine similarity of the content words")
    plt.tight_layout()
    plt.show()
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: cosine_similarity

# %% [markdown]
# The same words on a map: the first two of the 8 dimensions of E (the two strongest SVD
# directions), and the next two. The strongest directions separate the two "bank" sentences
# (river, water / money, loan) from everything else; dimensions 3 and 4 separate the royal
# sentences from the market ones. king and prince sit on the same point, and so do queen and
# princess.

# %%
try:
    if E is None:
        raise NotImplementedError("svd_embeddings is needed first")
    fig, axes = plt.subplots(1, 2, figsize=(12, 6))
    for ax, (i, j) in zip(axes, [(0, 1), (2, 3)]):
        at = {}  # words on (nearly) the same point share one label, so labels do not overlap
        for w in content:
            ax.scatter(E[idx[w], i], E[idx[w], j], color="C3" if w == "bank" else "C0")
            at.setdefault((round(float(E[idx[w], i]), 2), round(float(E[idx[w], j]), 2)), []).append(w)
        for k, ((x, y), words) in enumerate(sorted(at.items())):
            ax.annotate(" / ".join(words), (x, y), textcoords="offset points", xytext=(5, 5 if k % 2 else -12), fontsize=9)
        ax.axhline(0, color="lightgray", lw=0.5)
        ax.axvline(0, color="lightgray", lw=0.5)
        ax.set_xlabel(f"dimension {i + 1}")
        ax.set_ylabel(f"dimension {j + 1}")
    axes[0].set_title("the two strongest SVD dimensions")
    axes[1].set_title("dimensions 3 and 4")
    plt.tight_layout()
    plt.show()
except NotImplementedError as exc:
    todo(exc)

# %%
try:
    if E is None:
        raise NotImplementedError("svd_embeddings is needed first")
    print("nearest to 'king':", em.nearest(E, vocab, E[idx["king"]], 4, exclude=em.COURSE_STOP_WORDS + ("king",)))
    print("nearest to 'bread':", em.nearest(E, vocab, E[idx["bread"]], 4, exclude=em.COURSE_STOP_WORDS + ("bread",)))
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: nearest

# %% [markdown]
# ## 6. king − man + woman
#
# "man is to king as woman is to ?": `analogy(E, vocab, "man", "king", "woman")` looks for the
# words nearest to E[king] − E[man] + E[woman], skipping the three query words. The course got
# queen, then princess, then kingdom. (queen and princess are an exact tie: their order may
# differ on your machine.)

# %%
try:
    if E is None:
        raise NotImplementedError("svd_embeddings is needed first")
    print("king - man + woman ->", em.analogy(E, vocab, "man", "king", "woman", n=3))
    print("queen - woman + man ->", em.analogy(E, vocab, "woman", "queen", "man", n=3))
    target = E[idx["king"]] - E[idx["man"]] + E[idx["woman"]]
    print("cosines with the target:", {w: round(em.cosine_similarity(target, E[idx[w]]), 4)
                                       for w in ["queen", "princess", "kingdom", "king", "woman"]})
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: analogy

# %% [markdown]
# ## 7. One vector for two senses of "bank"
#
# "bank" appears in a river sentence and in a money sentence, but it gets ONE vector. Its
# nearest content words come from both senses: river (about 0.55) and money (about 0.39), and
# every royal word is below 0. A contextual model (attention, next week) gives "bank" a
# different vector in each sentence.

# %%
try:
    if E is None:
        raise NotImplementedError("svd_embeddings is needed first")
    near = em.nearest(E, vocab, E[idx["bank"]], 8, exclude=em.COURSE_STOP_WORDS + ("bank",))
    print("nearest to 'bank':", near)
    bank_sims = {w: em.cosine_similarity(E[idx["bank"]], E[idx[w]]) for w in content if w != "bank"}
    order = sorted(bank_sims, key=bank_sims.get, reverse=True)
    plt.figure(figsize=(7, 3))
    plt.bar(order, [bank_sims[w] for w in order], color=["C2" if bank_sims[w] > 0.2 else "C7" for w in order])
    plt.xticks(rotation=90)
    plt.ylabel("cosine with 'bank'")
    plt.title("one static vector for 'bank' sits between its two senses")
    plt.tight_layout()
    plt.show()
except NotImplementedError as exc:
    todo(exc)
