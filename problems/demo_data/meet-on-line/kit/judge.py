import math


def output_judging_function(input_str, candidate_output, reference_output):
    """One real number, absolute or relative error at most 1e-6."""
    try:
        cand = candidate_output.split()
        ref = reference_output.split()
        if len(cand) != 1 or len(ref) != 1:
            return False
        a = float(cand[0])
        b = float(ref[0])
        if not math.isfinite(a) or not math.isfinite(b):
            return False
        return abs(a - b) <= 1e-6 * max(1.0, abs(b))
    except Exception:
        return False
