#include <bits/stdc++.h>
using namespace std;
// Bug: counts in 64-bit and reduces modulo 1e9+7 only when printing; the true
// counts exceed 2^64 on large open grids, so they wrap around first.
long long dp[305][305];
int main() {
    const long long MOD = 1000000007LL;
    int h, w;
    cin >> h >> w;
    vector<string> g(h);
    for (auto &row : g) cin >> row;
    for (int r = 1; r <= h; ++r)
        for (int c = 1; c <= w; ++c) {
            if (g[r - 1][c - 1] == '#') continue;
            if (r == 1 && c == 1) dp[r][c] = 1;
            else dp[r][c] = (long long)((unsigned long long)dp[r - 1][c] + (unsigned long long)dp[r][c - 1]);
        }
    printf("%lld\n", (long long)((unsigned long long)dp[h][w] % MOD));
}
