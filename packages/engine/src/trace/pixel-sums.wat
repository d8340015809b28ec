;; Weighted channel sums of an interleaved RGB crop, with WebAssembly SIMD (pixel-sums.ts loads it;
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
  ;; The sum of four unsigned 32-bit lanes, exactly.
  (func $lanes (param $v v128) (result f64)
    (f64.add
      (f64.add (f64.convert_i32_u (i32x4.extract_lane 0 (local.get $v))) (f64.convert_i32_u (i32x4.extract_lane 1 (local.get $v))))
      (f64.add (f64.convert_i32_u (i32x4.extract_lane 2 (local.get $v))) (f64.convert_i32_u (i32x4.extract_lane 3 (local.get $v)))))))
