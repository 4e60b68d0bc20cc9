#include <bits/stdc++.h>
using namespace std;
typedef unsigned long long ull;
// Floating estimate, then exact correction with 128-bit squares.
int main() {
    int t;
    scanf("%d", &t);
    string out;
    while (t--) {
        ull n;
        scanf("%llu", &n);
        ull r = (ull)sqrtl((long double)n);
        while (r > 0 && (unsigned __int128)r * r > n) --r;
        while ((unsigned __int128)(r + 1) * (r + 1) <= n) ++r;
        out += to_string(r);
        out += '\n';
    }
    fputs(out.c_str(), stdout);
}
