import java.io.*;
import java.util.*;

public class Main {
    public static void main(String[] args) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        int n = (int) readLong(in);
        long[] a = new long[n];
        for (int i = 0; i < n; i++) a[i] = readLong(in);
        int[] ans = new int[n];
        int[] st = new int[n];
        int top = 0;
        for (int i = n - 1; i >= 0; i--) {
            while (top > 0 && a[st[top - 1]] <= a[i]) top--;
            ans[i] = top == 0 ? -1 : st[top - 1] + 1;
            st[top++] = i;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            if (i > 0) sb.append(' ');
            sb.append(ans[i]);
        }
        System.out.println(sb);
    }

    private static long readLong(DataInputStream in) throws IOException {
        int c = in.read();
        while (c == ' ' || c == '\n' || c == '\r') c = in.read();
        boolean neg = false;
        if (c == '-') { neg = true; c = in.read(); }
        long r = 0;
        while (c >= '0' && c <= '9') { r = r * 10 + (c - '0'); c = in.read(); }
        return neg ? -r : r;
    }
}
