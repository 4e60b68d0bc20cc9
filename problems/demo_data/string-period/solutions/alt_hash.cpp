#include <bits/stdc++.h>
using namespace std;
// Correct alternative: the smallest period p has suffix == prefix of length n - p;
// compare with double polynomial hashing and confirm with memcmp only on hits.
int main() {
    string s;
    cin >> s;
    int n = s.size();
    const unsigned long long M1 = 1000000007ULL, M2 = 998244353ULL, B = 131;
    vector<unsigned long long> h1(n + 1), h2(n + 1), p1(n + 1), p2(n + 1);
    p1[0] = p2[0] = 1;
    for (int i = 0; i < n; ++i) {
        h1[i + 1] = (h1[i] * B + s[i]) % M1;
        h2[i + 1] = (h2[i] * B + s[i]) % M2;
        p1[i + 1] = p1[i] * B % M1;
        p2[i + 1] = p2[i] * B % M2;
    }
    auto get = [&](const vector<unsigned long long> &h, const vector<unsigned long long> &pw,
                   unsigned long long M, int l, int r) {
        return (h[r] + M * M - h[l] * pw[r - l] % M) % M;
    };
    for (int p = 1; p < n; ++p) {
        int len = n - p;
        if (get(h1, p1, M1, 0, len) == get(h1, p1, M1, p, n) &&
            get(h2, p2, M2, 0, len) == get(h2, p2, M2, p, n)) {
            printf("%d\n", p);
            return 0;
        }
    }
    printf("%d\n", n);
}
