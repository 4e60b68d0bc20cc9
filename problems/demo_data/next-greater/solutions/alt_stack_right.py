import sys

# Correct alternative: stack of candidates scanned from the right.
data = sys.stdin.read().split()
n = int(data[0])
a = [int(x) for x in data[1:1 + n]]
res = [0] * n
st = []
for i in range(n - 1, -1, -1):
    while st and a[st[-1]] <= a[i]:
        st.pop()
    res[i] = st[-1] + 1 if st else -1
    st.append(i)
sys.stdout.write(" ".join(str(x) for x in res) + "\n")
