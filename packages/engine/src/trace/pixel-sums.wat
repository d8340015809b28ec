;; Weighted channel sums of an interleaved RGB crop and the skin colour model's refresh (below),
;; with WebAssembly SIMD (pixel-sums.ts loads it;
;; `npm run build:wasm` assembles it into pixel-sums-wasm.ts, and a test checks the two agree).
;;
;; sums(pix, w, groups, out): for the first 8·groups pixels at byte offset `pix` (RGB, 3 bytes a
;; pixel) and their unsigned 16-bit weights at `w` (at most 32767 each), writes to `out` four f64:
;; Σ w·R, Σ w·G, Σ w·B, Σ w, and a fifth: the largest byte of the pixels read. Every product and sum
;; is an integer, so the figures are exact whatever the order of the additions: they equal, bit for
;; bit, the plain scalar loop of pixel-sums.ts. At most 256 groups (2048 pixels); the caller checks.
;;
;; Eight pixels a group: the 24 pixel bytes are split by channel (one shuffle each), widened to
;; i16x8 and multiplied by the eight weights with i32x4.dot_i16x8_s, which adds neighbouring
;; products: each lane gains at most 2·32767·255 < 2^24 a group, so 256 groups stay below 2^32 and
;; the lanes are read as unsigned 32-bit integers.
(module
  (memory (export "memory") 1)
  ;; Byte-selection masks for i8x16.swizzle, read from memory at the start of each call so that they
  ;; stay in registers (a constant shuffle is rebuilt in every iteration by some engines): for each
  ;; channel, where its eight bytes go in i16 lanes (low byte; the high byte and every index ≥ 16
  ;; select zero) from the group's first 16 bytes (P), then from its bytes 8..23 (Q).
  (data (i32.const 65280)
    "\00\80\03\80\06\80\09\80\0c\80\0f\80\80\80\80\80"
    "\80\80\80\80\80\80\80\80\80\80\80\80\0a\80\0d\80"
    "\01\80\04\80\07\80\0a\80\0d\80\80\80\80\80\80\80"
    "\80\80\80\80\80\80\80\80\80\80\08\80\0b\80\0e\80"
    "\02\80\05\80\08\80\0b\80\0e\80\80\80\80\80\80\80"
    "\80\80\80\80\80\80\80\80\80\80\09\80\0c\80\0f\80")
  (func (export "sums") (param $pix i32) (param $w i32) (param $groups i32) (param $out i32)
    (local $i i32)
    (local $W v128) (local $P v128) (local $Q v128)
    (local $rp v128) (local $rq v128) (local $gp v128) (local $gq v128) (local $bp v128) (local $bq v128)
    (local $r v128) (local $g v128) (local $b v128) (local $ws v128) (local $mx v128)
    (local.set $rp (v128.load (i32.const 65280)))
    (local.set $rq (v128.load (i32.const 65296)))
    (local.set $gp (v128.load (i32.const 65312)))
    (local.set $gq (v128.load (i32.const 65328)))
    (local.set $bp (v128.load (i32.const 65344)))
    (local.set $bq (v128.load (i32.const 65360)))
    (block $done
      (loop $group
        (br_if $done (i32.ge_u (local.get $i) (local.get $groups)))
        (local.set $W (v128.load (local.get $w)))
        (local.set $P (v128.load (local.get $pix)))
        (local.set $Q (v128.load offset=8 (local.get $pix)))
        (local.set $mx (i8x16.max_u (local.get $mx) (i8x16.max_u (local.get $P) (local.get $Q))))
        (local.set $r (i32x4.add (local.get $r) (i32x4.dot_i16x8_s (local.get $W)
          (v128.or (i8x16.swizzle (local.get $P) (local.get $rp)) (i8x16.swizzle (local.get $Q) (local.get $rq))))))
        (local.set $g (i32x4.add (local.get $g) (i32x4.dot_i16x8_s (local.get $W)
          (v128.or (i8x16.swizzle (local.get $P) (local.get $gp)) (i8x16.swizzle (local.get $Q) (local.get $gq))))))
        (local.set $b (i32x4.add (local.get $b) (i32x4.dot_i16x8_s (local.get $W)
          (v128.or (i8x16.swizzle (local.get $P) (local.get $bp)) (i8x16.swizzle (local.get $Q) (local.get $bq))))))
        (local.set $ws (i32x4.add (local.get $ws) (i32x4.extadd_pairwise_i16x8_u (local.get $W))))
        (local.set $pix (i32.add (local.get $pix) (i32.const 24)))
        (local.set $w (i32.add (local.get $w) (i32.const 16)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $group)))
    (f64.store offset=0 (local.get $out) (call $lanes (local.get $r)))
    (f64.store offset=8 (local.get $out) (call $lanes (local.get $g)))
    (f64.store offset=16 (local.get $out) (call $lanes (local.get $b)))
    (f64.store offset=24 (local.get $out) (call $lanes (local.get $ws)))
    ;; The largest byte: fold the 16 lanes' maxima by halves.
    (local.set $mx (i8x16.max_u (local.get $mx) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 0 0 0 0 0 0 0 (local.get $mx) (local.get $mx))))
    (local.set $mx (i8x16.max_u (local.get $mx) (i8x16.shuffle 4 5 6 7 0 0 0 0 0 0 0 0 0 0 0 0 (local.get $mx) (local.get $mx))))
    (local.set $mx (i8x16.max_u (local.get $mx) (i8x16.shuffle 2 3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 (local.get $mx) (local.get $mx))))
    (local.set $mx (i8x16.max_u (local.get $mx) (i8x16.shuffle 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 (local.get $mx) (local.get $mx))))
    (f64.store offset=32 (local.get $out) (f64.convert_i32_u (i8x16.extract_lane_u 0 (local.get $mx)))))
;; refresh(pix, w, img, len, t0, refR, refG, refLuma, lo, hi, alpha, invR2, out): the skin colour
  ;; model's refresh of one phase's slots (skin-trace.ts `refresh`, operation for operation, two
  ;; slots a step in f64x2 lanes). Slot tables from padded slot t0 on: SLOT_BYTE (i32 byte offset
  ;; of the slot's pixel in the crop), SLOT_CROP (i32 crop pixel index) and SLOT_PRIOR (f32 prior);
  ;; `len` is even (an odd group ends with a slot of prior 0 whose weight goes past the crop's).
  ;; The smoothed image of the slots at `img`: three f32 planes of `len` (R, G, B). Each slot's
  ;; smoothed pixel moves by `alpha` towards the crop's, its skin weight is written to `w` (u16 at
  ;; its crop index), and four f64 go to `out`: the weights' sum and their sums with r and g
  ;; chromaticity and with luma. The lanes compute what the scalar loop computes (IEEE f64, no fused
  ;; operations) and the sums add lane 0 then lane 1 in slot order, so the figures are the scalar
  ;; loop's bit for bit; the loop's branches become lane selects (a zero weight adds exact zeros, as
  ;; the loop's skips do), and the luma gate's divisions run only for a pair with a slot outside the
  ;; plateau [lo, hi] of R + G + B + 1 (inside it the gate is exactly 1).
  (func (export "refresh") (param $pix i32) (param $w i32) (param $img i32) (param $len i32) (param $t0 i32)
    (param $refR f64) (param $refG f64) (param $refLuma f64) (param $lo f64) (param $hi f64)
    (param $alpha f64) (param $invR2 f64) (param $out i32)
    (local $i i32) (local $t i32) (local $a i32) (local $b i32) (local $at i32) (local $plane i32)
    (local $P v128) (local $I v128) (local $R v128) (local $G v128) (local $B v128) (local $k v128)
    (local $sum v128) (local $inv v128) (local $cr v128) (local $cg v128) (local $dr v128) (local $dg v128)
    (local $kc v128) (local $ok v128) (local $qv v128) (local $gate v128) (local $wi v128) (local $ry v128)
    (local $rs f64) (local $rr f64) (local $rg f64) (local $rl f64)
    (local.set $k (f64x2.splat (local.get $alpha)))
    (local.set $plane (i32.shl (local.get $len) (i32.const 2)))
    (block $done
      (loop $pair
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (local.set $t (i32.shl (i32.add (local.get $t0) (local.get $i)) (i32.const 2)))
        (local.set $a (i32.add (local.get $pix) (i32.load offset=20480 (local.get $t))))
        (local.set $b (i32.add (local.get $pix) (i32.load offset=20484 (local.get $t))))
        (local.set $at (i32.add (local.get $img) (i32.shl (local.get $i) (i32.const 2))))
        ;; R, G, B: the smoothed value moves by alpha towards the pixel's, stored back as f32
        (local.set $P (f64x2.replace_lane 1 (f64x2.splat (f64.convert_i32_u (i32.load8_u (local.get $a))))
          (f64.convert_i32_u (i32.load8_u (local.get $b)))))
        (local.set $I (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $at))))
        (local.set $R (f64x2.add (local.get $I) (f64x2.mul (local.get $k) (f64x2.sub (local.get $P) (local.get $I)))))
        (v128.store64_lane 0 (local.get $at) (f32x4.demote_f64x2_zero (local.get $R)))
        (local.set $at (i32.add (local.get $at) (local.get $plane)))
        (local.set $P (f64x2.replace_lane 1 (f64x2.splat (f64.convert_i32_u (i32.load8_u offset=1 (local.get $a))))
          (f64.convert_i32_u (i32.load8_u offset=1 (local.get $b)))))
        (local.set $I (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $at))))
        (local.set $G (f64x2.add (local.get $I) (f64x2.mul (local.get $k) (f64x2.sub (local.get $P) (local.get $I)))))
        (v128.store64_lane 0 (local.get $at) (f32x4.demote_f64x2_zero (local.get $G)))
        (local.set $at (i32.add (local.get $at) (local.get $plane)))
        (local.set $P (f64x2.replace_lane 1 (f64x2.splat (f64.convert_i32_u (i32.load8_u offset=2 (local.get $a))))
          (f64.convert_i32_u (i32.load8_u offset=2 (local.get $b)))))
        (local.set $I (f64x2.promote_low_f32x4 (v128.load64_zero (local.get $at))))
        (local.set $B (f64x2.add (local.get $I) (f64x2.mul (local.get $k) (f64x2.sub (local.get $P) (local.get $I)))))
        (v128.store64_lane 0 (local.get $at) (f32x4.demote_f64x2_zero (local.get $B)))
        ;; not clipped: every channel below 253.5
        (local.set $ok (v128.and
          (v128.and (f64x2.lt (local.get $R) (f64x2.splat (f64.const 253.5))) (f64x2.lt (local.get $G) (f64x2.splat (f64.const 253.5))))
          (f64x2.lt (local.get $B) (f64x2.splat (f64.const 253.5)))))
        (local.set $sum (f64x2.add (f64x2.add (f64x2.add (local.get $R) (local.get $G)) (local.get $B)) (f64x2.splat (f64.const 1))))
        (local.set $inv (f64x2.div (f64x2.splat (f64.const 1)) (local.get $sum)))
        (local.set $cr (f64x2.mul (local.get $R) (local.get $inv)))
        (local.set $cg (f64x2.mul (local.get $G) (local.get $inv)))
        (local.set $dr (f64x2.sub (local.get $cr) (f64x2.splat (local.get $refR))))
        (local.set $dg (f64x2.sub (local.get $cg) (f64x2.splat (local.get $refG))))
        (local.set $kc (f64x2.sub (f64x2.splat (f64.const 1))
          (f64x2.mul (f64x2.add (f64x2.mul (local.get $dr) (local.get $dr)) (f64x2.mul (local.get $dg) (local.get $dg)))
            (f64x2.splat (local.get $invR2)))))
        (local.set $ok (v128.and (local.get $ok) (f64x2.gt (local.get $kc) (f64x2.splat (f64.const 0)))))
        (local.set $wi (f64x2.mul (f64x2.promote_low_f32x4 (v128.load64_zero offset=32768 (local.get $t))) (local.get $kc)))
        ;; the luma gate of q = (sum / 3) / refLuma, where a weighted slot is outside the plateau
        (if (v128.any_true (v128.andnot (local.get $ok)
              (v128.and (f64x2.ge (local.get $sum) (f64x2.splat (local.get $lo))) (f64x2.le (local.get $sum) (f64x2.splat (local.get $hi))))))
          (then
            (local.set $qv (f64x2.div (f64x2.div (local.get $sum) (f64x2.splat (f64.const 3))) (f64x2.splat (local.get $refLuma))))
            (local.set $gate (v128.bitselect
              (f64x2.mul (f64x2.sub (f64x2.splat (f64.const 1.9)) (local.get $qv)) (f64x2.splat (f64.const 2.5)))
              (f64x2.splat (f64.const 1))
              (f64x2.gt (local.get $qv) (f64x2.splat (f64.const 1.5)))))
            (local.set $gate (v128.bitselect
              (f64x2.mul (f64x2.sub (local.get $qv) (f64x2.splat (f64.const 0.35))) (f64x2.splat (f64.const 4)))
              (local.get $gate)
              (f64x2.lt (local.get $qv) (f64x2.splat (f64.const 0.6)))))
            (local.set $gate (v128.andnot (local.get $gate)
              (v128.or (f64x2.lt (local.get $qv) (f64x2.splat (f64.const 0.35))) (f64x2.gt (local.get $qv) (f64x2.splat (f64.const 1.9))))))
            (local.set $wi (f64x2.mul (local.get $wi) (local.get $gate)))))
        (local.set $wi (v128.and (local.get $ok) (local.get $wi)))
        ;; weights: skin-trace.ts `quantize` (w·32767 + 0.5, truncated: it is positive, so its floor),
        ;; the integer read from the low bits of floor + 2^52
        (local.set $I (f64x2.add
          (f64x2.floor (f64x2.add (f64x2.mul (local.get $wi) (f64x2.splat (f64.const 32767))) (f64x2.splat (f64.const 0.5))))
          (f64x2.splat (f64.const 0x1p52))))
        (i32.store16 (i32.add (local.get $w) (i32.shl (i32.load offset=26624 (local.get $t)) (i32.const 1)))
          (i32x4.extract_lane 0 (local.get $I)))
        (i32.store16 (i32.add (local.get $w) (i32.shl (i32.load offset=26628 (local.get $t)) (i32.const 1)))
          (i32x4.extract_lane 2 (local.get $I)))
        ;; the sums, lane 0 then lane 1
        (local.set $cr (f64x2.mul (local.get $wi) (local.get $cr)))
        (local.set $cg (f64x2.mul (local.get $wi) (local.get $cg)))
        (local.set $ry (f64x2.div (f64x2.mul (local.get $wi) (local.get $sum)) (f64x2.splat (f64.const 3))))
        (local.set $rs (f64.add (f64.add (local.get $rs) (f64x2.extract_lane 0 (local.get $wi))) (f64x2.extract_lane 1 (local.get $wi))))
        (local.set $rr (f64.add (f64.add (local.get $rr) (f64x2.extract_lane 0 (local.get $cr))) (f64x2.extract_lane 1 (local.get $cr))))
        (local.set $rg (f64.add (f64.add (local.get $rg) (f64x2.extract_lane 0 (local.get $cg))) (f64x2.extract_lane 1 (local.get $cg))))
        (local.set $rl (f64.add (f64.add (local.get $rl) (f64x2.extract_lane 0 (local.get $ry))) (f64x2.extract_lane 1 (local.get $ry))))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $pair)))
    (f64.store offset=0 (local.get $out) (local.get $rs))
    (f64.store offset=8 (local.get $out) (local.get $rr))
    (f64.store offset=16 (local.get $out) (local.get $rg))
    (f64.store offset=24 (local.get $out) (local.get $rl)))
  ;; The sum of four unsigned 32-bit lanes, exactly.
  (func $lanes (param $v v128) (result f64)
    (f64.add
      (f64.add (f64.convert_i32_u (i32x4.extract_lane 0 (local.get $v))) (f64.convert_i32_u (i32x4.extract_lane 1 (local.get $v))))
      (f64.add (f64.convert_i32_u (i32x4.extract_lane 2 (local.get $v))) (f64.convert_i32_u (i32x4.extract_lane 3 (local.get $v)))))))
