/*
 * rng.c - the simulator's randomness: xoshiro256** seeded through splitmix64,
 * and the few distributions the model draws from.
 *
 * Reproducible bytes are the point, so nothing here calls libm: log and exp
 * are polynomials evaluated with +, -, *, / and exact power-of-two scaling
 * (done on the bits) only, which IEEE 754 double arithmetic rounds the same
 * way on every host; the normal variate is Irwin-Hall (12 uniforms). (Accuracy matters
 * far less than agreement: both are within a few ulps of the true values.)
 */
#include <float.h>
#include <string.h>
#include "synth_internal.h"

/* Same doubles on every compiler and target: no fused multiply-add (GCC in ISO C mode never fuses). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void synth_rng_seed(synth_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

uint64_t synth_rng_below(synth_rng *r, uint64_t n)
{
    if (n <= 1) return 0;
    /* Lemire's multiply-shift with rejection: unbiased, one draw almost always. */
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        uint64_t x = synth_rng_u64(r);
        uint64_t hi, lo;
        /* 64x64 -> 128 multiply from 32-bit halves (no __int128 needed). */
        uint64_t a = x >> 32, b = x & 0xFFFFFFFFu, c = n >> 32, d = n & 0xFFFFFFFFu;
        uint64_t bd = b * d, ad = a * d, bc = b * c, ac = a * c;
        uint64_t mid = (bd >> 32) + (ad & 0xFFFFFFFFu) + (bc & 0xFFFFFFFFu);
        lo = (bd & 0xFFFFFFFFu) | (mid << 32);
        hi = ac + (ad >> 32) + (bc >> 32) + (mid >> 32);
        if (lo >= threshold) return hi;
    }
}

double synth_rng_unit(synth_rng *r)
{
    /* 53 random bits, shifted off zero: (0, 1). */
    return ((double)(synth_rng_u64(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

bool synth_rng_chance(synth_rng *r, double p)
{
    if (p <= 0) return false;
    if (p >= 1) return true;
    return synth_rng_unit(r) < p;
}

#define LN2 0.6931471805599453094172321

/* x = m * 2^e with m in [0.5, 1), for finite x > 0 (as frexp, on the bits). */
static double split(double x, int *e)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int ex = (int)((b >> 52) & 0x7FF);
    int adj = 0;
    if (ex == 0) { /* subnormal: scale up first */
        x *= 18014398509481984.0; /* 2^54 */
        memcpy(&b, &x, sizeof b);
        ex = (int)((b >> 52) & 0x7FF);
        adj = -54;
    }
    *e = ex - 1022 + adj;
    b = (b & ~(0x7FFull << 52)) | (1022ull << 52);
    memcpy(&x, &b, sizeof b);
    return x;
}

/* x * 2^k, exactly, for the results exp produces (normal range). */
static double scale2(double x, int k)
{
    while (k > 1000) {
        x *= 0x1p1000;
        k -= 1000;
    }
    while (k < -1000) {
        x *= 0x1p-1000;
        k += 1000;
    }
    uint64_t b = (uint64_t)(k + 1023) << 52;
    double f;
    memcpy(&f, &b, sizeof f);
    return x * f;
}


/* log(1 + i/64) and 1 / (1 + i/64), i = 0..63, correctly rounded. */
static const double log_c[64] = {
    0x0.0p+0, 0x1.fc0a8b0fc03e4p-7, 0x1.f829b0e783300p-6, 0x1.77458f632dcfcp-5,
    0x1.f0a30c01162a6p-5, 0x1.341d7961bd1d1p-4, 0x1.6f0d28ae56b4cp-4, 0x1.a926d3a4ad563p-4,
    0x1.e27076e2af2e6p-4, 0x1.0d77e7cd08e59p-3, 0x1.29552f81ff523p-3, 0x1.44d2b6ccb7d1ep-3,
    0x1.5ff3070a793d4p-3, 0x1.7ab890210d909p-3, 0x1.9525a9cf456b4p-3, 0x1.af3c94e80bff3p-3,
    0x1.c8ff7c79a9a22p-3, 0x1.e27076e2af2e6p-3, 0x1.fb9186d5e3e2bp-3, 0x1.0a324e27390e3p-2,
    0x1.1675cababa60ep-2, 0x1.22941fbcf7966p-2, 0x1.2e8e2bae11d31p-2, 0x1.3a64c556945eap-2,
    0x1.4618bc21c5ec2p-2, 0x1.51aad872df82dp-2, 0x1.5d1bdbf5809cap-2, 0x1.686c81e9b14afp-2,
    0x1.739d7f6bbd007p-2, 0x1.7eaf83b82afc3p-2, 0x1.89a3386c1425bp-2, 0x1.947941c2116fbp-2,
    0x1.9f323ecbf984cp-2, 0x1.a9cec9a9a084ap-2, 0x1.b44f77bcc8f63p-2, 0x1.beb4d9da71b7cp-2,
    0x1.c8ff7c79a9a22p-2, 0x1.d32fe7e00ebd5p-2, 0x1.dd46a04c1c4a1p-2, 0x1.e744261d68788p-2,
    0x1.f128f5faf06edp-2, 0x1.faf588f78f31fp-2, 0x1.02552a5a5d0ffp-1, 0x1.0723e5c1cdf40p-1,
    0x1.0be72e4252a83p-1, 0x1.109f39e2d4c97p-1, 0x1.154c3d2f4d5eap-1, 0x1.19ee6b467c96fp-1,
    0x1.1e85f5e7040d0p-1, 0x1.23130d7bebf43p-1, 0x1.2795e1289b11bp-1, 0x1.2c0e9ed448e8cp-1,
    0x1.307d7334f10bep-1, 0x1.34e289d9ce1d3p-1, 0x1.393e0d3562a1ap-1, 0x1.3d9026a7156fbp-1,
    0x1.41d8fe84672aep-1, 0x1.4618bc21c5ec2p-1, 0x1.4a4f85db03ebbp-1, 0x1.4e7d811b75bb1p-1,
    0x1.52a2d265bc5abp-1, 0x1.56bf9d5b3f399p-1, 0x1.5ad404c359f2dp-1, 0x1.5ee02a9241675p-1,
};
static const double inv_c[64] = {
    0x1.0000000000000p+0, 0x1.f81f81f81f820p-1, 0x1.f07c1f07c1f08p-1, 0x1.e9131abf0b767p-1,
    0x1.e1e1e1e1e1e1ep-1, 0x1.dae6076b981dbp-1, 0x1.d41d41d41d41dp-1, 0x1.cd85689039b0bp-1,
    0x1.c71c71c71c71cp-1, 0x1.c0e070381c0e0p-1, 0x1.bacf914c1bad0p-1, 0x1.b4e81b4e81b4fp-1,
    0x1.af286bca1af28p-1, 0x1.a98ef606a63bep-1, 0x1.a41a41a41a41ap-1, 0x1.9ec8e951033d9p-1,
    0x1.999999999999ap-1, 0x1.948b0fcd6e9e0p-1, 0x1.8f9c18f9c18fap-1, 0x1.8acb90f6bf3aap-1,
    0x1.8618618618618p-1, 0x1.8181818181818p-1, 0x1.7d05f417d05f4p-1, 0x1.78a4c8178a4c8p-1,
    0x1.745d1745d1746p-1, 0x1.702e05c0b8170p-1, 0x1.6c16c16c16c17p-1, 0x1.6816816816817p-1,
    0x1.642c8590b2164p-1, 0x1.6058160581606p-1, 0x1.5c9882b931057p-1, 0x1.58ed2308158edp-1,
    0x1.5555555555555p-1, 0x1.51d07eae2f815p-1, 0x1.4e5e0a72f0539p-1, 0x1.4afd6a052bf5bp-1,
    0x1.47ae147ae147bp-1, 0x1.446f86562d9fbp-1, 0x1.4141414141414p-1, 0x1.3e22cbce4a902p-1,
    0x1.3b13b13b13b14p-1, 0x1.3813813813814p-1, 0x1.3521cfb2b78c1p-1, 0x1.323e34a2b10bfp-1,
    0x1.2f684bda12f68p-1, 0x1.2c9fb4d812ca0p-1, 0x1.29e4129e4129ep-1, 0x1.27350b8812735p-1,
    0x1.2492492492492p-1, 0x1.21fb78121fb78p-1, 0x1.1f7047dc11f70p-1, 0x1.1cf06ada2811dp-1,
    0x1.1a7b9611a7b96p-1, 0x1.1811811811812p-1, 0x1.15b1e5f75270dp-1, 0x1.135c81135c811p-1,
    0x1.1111111111111p-1, 0x1.0ecf56be69c90p-1, 0x1.0c9714fbcda3bp-1, 0x1.0a6810a6810a7p-1,
    0x1.0842108421084p-1, 0x1.0624dd2f1a9fcp-1, 0x1.0410410410410p-1, 0x1.0204081020408p-1,
};

double synth_log(double x)
{
    if (!(x > 0)) return -DBL_MAX;
    int e;
    double m = 2 * split(x, &e); /* exact: x = m * 2^(e-1), m in [1, 2) */
    int i = (int)((m - 1) * 64);  /* exact: m has at most 53 bits */
    /* m = c (1 + r), c = 1 + i/64, 0 <= r < 1/64: log(1 + r) to r^7 (error < 1e-15). */
    double r = (m - (1 + i / 64.0)) * inv_c[i];
    double p = r * (1 + r * (-1.0 / 2 + r * (1.0 / 3 + r * (-1.0 / 4 + r * (1.0 / 5 + r * (-1.0 / 6 + r * (1.0 / 7)))))));
    return log_c[i] + p + (e - 1) * LN2;
}

/* 2^(j/64), j = 0..63, correctly rounded. */
static const double exp2_64[64] = {
    0x1.0000000000000p+0, 0x1.02c9a3e778061p+0, 0x1.059b0d3158574p+0, 0x1.0874518759bc8p+0,
    0x1.0b5586cf9890fp+0, 0x1.0e3ec32d3d1a2p+0, 0x1.11301d0125b51p+0, 0x1.1429aaea92de0p+0,
    0x1.172b83c7d517bp+0, 0x1.1a35beb6fcb75p+0, 0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0,
    0x1.2387a6e756238p+0, 0x1.26b4565e27cddp+0, 0x1.29e9df51fdee1p+0, 0x1.2d285a6e4030bp+0,
    0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0, 0x1.371a7373aa9cbp+0, 0x1.3a7db34e59ff7p+0,
    0x1.3dea64c123422p+0, 0x1.4160a21f72e2ap+0, 0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0,
    0x1.4bfdad5362a27p+0, 0x1.4f9b2769d2ca7p+0, 0x1.5342b569d4f82p+0, 0x1.56f4736b527dap+0,
    0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0, 0x1.6247eb03a5585p+0, 0x1.6623882552225p+0,
    0x1.6a09e667f3bcdp+0, 0x1.6dfb23c651a2fp+0, 0x1.71f75e8ec5f74p+0, 0x1.75feb564267c9p+0,
    0x1.7a11473eb0187p+0, 0x1.7e2f336cf4e62p+0, 0x1.82589994cce13p+0, 0x1.868d99b4492edp+0,
    0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0, 0x1.93737b0cdc5e5p+0, 0x1.97d829fde4e50p+0,
    0x1.9c49182a3f090p+0, 0x1.a0c667b5de565p+0, 0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0,
    0x1.ae89f995ad3adp+0, 0x1.b33a2b84f15fbp+0, 0x1.b7f76f2fb5e47p+0, 0x1.bcc1e904bc1d2p+0,
    0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0, 0x1.cb720dcef9069p+0, 0x1.d072d4a07897cp+0,
    0x1.d5818dcfba487p+0, 0x1.da9e603db3285p+0, 0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0,
    0x1.ea4afa2a490dap+0, 0x1.efa1bee615a27p+0, 0x1.f50765b6e4540p+0, 0x1.fa7c1819e90d8p+0,
};

double synth_exp(double x)
{
    if (x > 700) x = 700;
    if (x < -700) return 0;
    /* x = (64q + j) ln2/64 + r, |r| <= ln2/128: exp(x) = 2^q 2^(j/64) exp(r). */
    /* Round to nearest by the 1.5 * 2^52 trick (default rounding mode). */
    double kd = x * (64 / LN2) + 0x1.8p52;
    long k = (long)(kd - 0x1.8p52);
    double r = x - (double)k * (LN2 / 64);
    int j = (int)(k & 63);
    int q = (int)((k - j) / 64);
    /* Taylor to r^6/6! (error < 1e-19 for |r| < 0.0055), by Horner. */
    double p = 1 + r * (1 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720))))));
    return scale2(exp2_64[j] * p, q); /* exact scaling */
}

double synth_rng_exp(synth_rng *r, double mean)
{
    return -mean * synth_log(synth_rng_unit(r));
}

double synth_rng_normal(synth_rng *r)
{
    /* Irwin-Hall: the sum of 12 uniforms minus 6 has mean 0 and variance 1, a
     * close normal shape within +-6 sigma; 6 draws, no log or root. */
    uint64_t acc = 0;
    for (int i = 0; i < 6; i++) {
        uint64_t x = synth_rng_u64(r);
        acc += (x >> 32) + (x & 0xFFFFFFFFu);
    }
    return (double)acc * (1.0 / 4294967296.0) - 6.0;
}

double synth_rng_lognormal(synth_rng *r, double median, double sigma)
{
    return median * synth_exp(sigma * synth_rng_normal(r));
}
