"""cooccurrence runs across sentence boundaries

Your counts treat the corpus as one long stream, so the end of one sentence becomes the context of the start
of the next. Co-occurrence is counted inside each sentence only: loop over the sentences and clip the window
to the current sentence.
"""
CAUGHT_BY = [
    "hidden/test_cooccurrence.py::test_course_counts",
    "hidden/test_cooccurrence.py::test_edge_cases",
    "hidden/test_cooccurrence.py::test_random_corpora",
    "hidden/test_cooccurrence.py::test_sentence_boundaries",
    "hidden/test_course_results.py::test_bank_neighbours",
    "hidden/test_course_results.py::test_course_similarities",
    "public/test_embeddings_public.py::test_cooccurrence_example",
    "public/test_embeddings_public.py::test_course_results",
]


def cooccurrence(corpus, vocab, window):
    index = {w: i for i, w in enumerate(vocab)}
    stream = [w for sentence in corpus for w in sentence]
    C = np.zeros((len(vocab), len(vocab)))
    for i, w in enumerate(stream):
        for j in range(max(0, i - window), min(len(stream), i + window + 1)):
            if j != i:
                C[index[w], index[stream[j]]] += 1
    return C
