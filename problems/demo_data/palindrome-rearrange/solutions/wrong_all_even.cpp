#include <bits/stdc++.h>
using namespace std;
// Bug: demands every letter count to be even, forgetting the middle letter of odd-length words.
int main() {
    int t;
    cin >> t;
    string s;
    while (t--) {
        cin >> s;
        int cnt[26] = {0};
        for (char c : s) cnt[c - 'a']++;
        bool ok = true;
        for (int k = 0; k < 26; ++k) if (cnt[k] % 2) ok = false;
        puts(ok ? "YES" : "NO");
    }
}
