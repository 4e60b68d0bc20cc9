import sys

# Correct alternative: sort the letters and count runs of odd length.
data = sys.stdin.read().split()
t = int(data[0])
res = []
for s in data[1:1 + t]:
    chars = sorted(s)
    odd = 0
    i = 0
    while i < len(chars):
        j = i
        while j < len(chars) and chars[j] == chars[i]:
            j += 1
        odd += (j - i) % 2
        i = j
    res.append("YES" if odd <= 1 else "NO")
print("\n".join(res))
