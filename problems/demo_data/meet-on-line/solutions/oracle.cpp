#include <bits/stdc++.h>
using namespace std;
// Two friends i, j (x_i > x_j) need at least (x_i - x_j) / (v_i + v_j); the
// largest such bound over all pairs is achievable (Helly on intervals).
int main() {
    int n;
    scanf("%d", &n);
    vector<long long> x(n), v(n);
    for (auto &e : x) scanf("%lld", &e);
    for (auto &e : v) scanf("%lld", &e);
    long double best = 0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            if (x[i] > x[j]) best = max(best, (long double)(x[i] - x[j]) / (v[i] + v[j]));
    printf("%.12Lf\n", best);
}
