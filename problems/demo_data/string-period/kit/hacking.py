import random
import string


# Targets the naive "try every p, compare until mismatch" scan: a run of one
# letter with a different last letter makes every p scan to the end, n^2/2 steps.
def gen_hacking_input_one_letter_then_other():
    n = 2 * 10**5
    a, b = random.sample(string.ascii_lowercase, 2)
    return a * (n - 1) + b + "\n"


# Targets the same naive scan: a short block repeated with the last character
# changed; every multiple of the block length scans to the end.
def gen_hacking_input_broken_short_block():
    n = 2 * 10**5
    block_len = random.randint(2, 4)
    letters = random.sample(string.ascii_lowercase, 3)
    block = [letters[0]] * block_len
    block[random.randrange(block_len)] = letters[1]
    s = list(("".join(block) * (n // block_len + 1))[:n])
    s[-1] = letters[2]
    return "".join(s) + "\n"


# Targets "the period must divide n": a block repeated with a cut-short last copy.
def gen_hacking_input_partial_last_block():
    block_len = random.randint(2, 1000)
    block = "".join(random.choice("ab") for _ in range(block_len - 1)) + "c"
    copies = random.randint(2, 2 * 10**5 // block_len - 1)
    cut = random.randint(1, block_len - 1)
    return block * copies + block[:cut] + "\n"
