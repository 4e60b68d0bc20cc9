#include <bits/stdc++.h>
using namespace std;
// Tries p = 1, 2, ... and compares s[i] with s[i - p], stopping at the first
// mismatch. On random text a mismatch comes after a couple of characters, so
// this is linear in practice; on "aaaa...ab" every p scans to the end: O(n^2).
int main() {
    string s;
    cin >> s;
    int n = s.size();
    for (int p = 1; p <= n; ++p) {
        bool ok = true;
        for (int i = p; i < n; ++i)
            if (s[i] != s[i - p]) { ok = false; break; }
        if (ok) { printf("%d\n", p); return 0; }
    }
}
