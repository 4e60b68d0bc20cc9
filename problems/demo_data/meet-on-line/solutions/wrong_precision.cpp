#include <bits/stdc++.h>
using namespace std;
// Correct search, but prints only three decimals: too coarse for small answers.
int main() {
    int n;
    scanf("%d", &n);
    vector<double> x(n), v(n);
    for (auto &e : x) scanf("%lf", &e);
    for (auto &e : v) scanf("%lf", &e);
    double lo = 0, hi = 1e9;
    for (int it = 0; it < 100; ++it) {
        double t = (lo + hi) / 2, L = -1e30, R = 1e30;
        for (int i = 0; i < n; ++i) { L = max(L, x[i] - v[i] * t); R = min(R, x[i] + v[i] * t); }
        if (L <= R) hi = t; else lo = t;
    }
    printf("%.3f\n", hi);
}
