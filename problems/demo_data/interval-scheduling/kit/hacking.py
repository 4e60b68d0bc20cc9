import random


# Targets treating touching requests as compatible: a chain where each request
# starts exactly where the previous ends, on a huge coordinate range (random
# tests with 1e9 coordinates almost never touch).
def gen_hacking_input_touching_chain():
    n = 10**4
    lines = [str(n)]
    cur = random.randint(1, 1000)
    for _ in range(n):
        nxt = cur + random.randint(1, 90000)
        lines.append(f"{cur} {nxt}")
        cur = nxt
    body = lines[1:]
    random.shuffle(body)
    return "\n".join([lines[0]] + body) + "\n"


# Targets greedy by start: one long early request covering many short ones.
def gen_hacking_input_long_first():
    n = random.randint(2, 10**4)
    lines = [str(n), f"1 {10**9}"]
    for _ in range(n - 1):
        l = random.randint(2, 10**9 - 1)
        lines.append(f"{l} {min(10**9, l + random.randint(0, 1000))}")
    return "\n".join(lines) + "\n"


# Targets the O(n^2) dp: maximum n.
def gen_hacking_input_max_n():
    n = 10**4
    lines = [str(n)]
    for _ in range(n):
        l = random.randint(1, 10**9)
        lines.append(f"{l} {min(10**9, l + random.randint(0, 10**6))}")
    return "\n".join(lines) + "\n"
