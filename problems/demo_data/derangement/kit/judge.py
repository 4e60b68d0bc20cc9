def output_judging_function(input_str, candidate_output, reference_output):
    """Every line must be a permutation without fixed points, or -1 exactly when n = 1."""
    try:
        ns = [int(t) for t in input_str.split()[1:]]
        lines = candidate_output.strip().split("\n")
        if len(lines) != len(ns):
            return False
        for n, line in zip(ns, lines):
            toks = line.split()
            if n == 1:
                if toks != ["-1"]:
                    return False
                continue
            if len(toks) != n:
                return False
            seen = bytearray(n + 1)
            for i, tok in enumerate(toks, 1):
                if not tok.isdigit():
                    return False
                v = int(tok)
                if v < 1 or v > n or v == i or seen[v]:
                    return False
                seen[v] = 1
        return True
    except Exception:
        return False
