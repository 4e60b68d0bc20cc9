#include <bits/stdc++.h>
using namespace std;
int main() {
    const long long MOD = 1000000007LL;
    int h, w;
    cin >> h >> w;
    vector<string> g(h);
    for (auto &row : g) cin >> row;
    vector<long long> dp(w, 0);
    for (int r = 0; r < h; ++r)
        for (int c = 0; c < w; ++c) {
            if (g[r][c] == '#') { dp[c] = 0; continue; }
            if (r == 0 && c == 0) { dp[c] = 1; continue; }
            if (c > 0) dp[c] = (dp[c] + dp[c - 1]) % MOD;
        }
    printf("%lld\n", dp[w - 1]);
}
