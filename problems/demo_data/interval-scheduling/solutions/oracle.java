import java.io.*;
import java.util.*;

// Scans requests by start from the right: keep the one that starts latest.
public class Main {
    public static void main(String[] args) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        int n = nextInt(in);
        long[] key = new long[n];
        for (int i = 0; i < n; i++) {
            long l = nextInt(in), r = nextInt(in);
            key[i] = l * 2_000_000_000L + r;
        }
        Arrays.sort(key);
        int cnt = 0;
        long bound = Long.MAX_VALUE;
        for (int i = n - 1; i >= 0; i--) {
            long l = key[i] / 2_000_000_000L, r = key[i] % 2_000_000_000L;
            if (r < bound) { cnt++; bound = l; }
        }
        System.out.println(cnt);
    }

    private static int nextInt(DataInputStream in) throws IOException {
        int c = in.read();
        while (c == ' ' || c == '\n' || c == '\r') c = in.read();
        int r = 0;
        while (c >= '0' && c <= '9') { r = r * 10 + (c - '0'); c = in.read(); }
        return r;
    }
}
