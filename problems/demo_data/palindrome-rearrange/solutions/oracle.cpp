#include <bits/stdc++.h>
using namespace std;
// Parity bitmask of letter counts: palindromic arrangement iff at most one bit set.
int main() {
    int t;
    cin >> t;
    string s;
    while (t--) {
        cin >> s;
        unsigned mask = 0;
        for (char c : s) mask ^= 1u << (c - 'a');
        puts(__builtin_popcount(mask) <= 1 ? "YES" : "NO");
    }
}
