def output_judging_function(input_str, candidate_output, reference_output):
    """Any valid pair is accepted; -1 only when no pair exists."""
    try:
        data = input_str.split()
        n, x = int(data[0]), int(data[1])
        a = [int(t) for t in data[2:2 + n]]
        cand = candidate_output.split()
        ref = reference_output.split()
        if len(cand) == 1:
            return cand[0] == "-1" and ref == ["-1"]
        if len(cand) != 2:
            return False
        for t in cand:
            if not t.isdigit():
                return False
        i, j = int(cand[0]), int(cand[1])
        # A valid pair is proof on its own, whatever the reference says.
        return 1 <= i < j <= n and a[i - 1] + a[j - 1] == x
    except Exception:
        return False
