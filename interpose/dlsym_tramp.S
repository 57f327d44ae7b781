/* dlsym_tramp.S — our dlsym and dlopen, in assembly for one reason: glibc
 * resolves RTLD_NEXT (and dlopen's $ORIGIN) relative to the *caller*, found
 * from the return address. A plain C wrapper would make every lookup look
 * like ours. Here calls we do not care about jump straight into the real
 * function with the caller's return address untouched.
 *
 *   dlsym(h, name): RTLD_NEXT: jump to the real dlsym, always. That is
 *                   how an interposer (a user's shim, a tracing library,
 *                   another profiler) finds what comes after it: its
 *                   answer depends on the caller, and is ours when we come
 *                   next, or the real function when we came before (our
 *                   wrapper there would call the shim again, forever).
 *                   Else, if gl_dlsym_is_hooked(name), tail-call
 *                   gl_dlsym_hooked(h, name) (C, returns our wrapper);
 *                   else jump to the real dlsym.
 *   dlopen(f, flags): clear RTLD_DEEPBIND (it would bind a library to its
 *                   own dependencies first, around our wrappers) and jump
 *                   to the real dlopen. */
    .text

    .globl  dlsym
    .type   dlsym, @function
dlsym:
    .cfi_startproc
    cmp     $-1, %rdi              /* RTLD_NEXT */
    je      2f
    push    %rdi
    .cfi_adjust_cfa_offset 8
    push    %rsi
    .cfi_adjust_cfa_offset 8
    sub     $8, %rsp
    .cfi_adjust_cfa_offset 8
    mov     %rsi, %rdi
    call    gl_dlsym_is_hooked
    add     $8, %rsp
    .cfi_adjust_cfa_offset -8
    pop     %rsi
    .cfi_adjust_cfa_offset -8
    pop     %rdi
    .cfi_adjust_cfa_offset -8
    test    %eax, %eax
    jnz     1f
    mov     gl_real_dlsym(%rip), %rax
    jmp     *%rax
1:
    jmp     gl_dlsym_hooked
2:
    push    %rdi
    .cfi_adjust_cfa_offset 8
    push    %rsi
    .cfi_adjust_cfa_offset 8
    sub     $8, %rsp
    .cfi_adjust_cfa_offset 8
    call    gl_real_init           /* the real dlsym, found once */
    add     $8, %rsp
    .cfi_adjust_cfa_offset -8
    pop     %rsi
    .cfi_adjust_cfa_offset -8
    pop     %rdi
    .cfi_adjust_cfa_offset -8
    mov     gl_real_dlsym(%rip), %rax
    jmp     *%rax
    .cfi_endproc
    .size   dlsym, .-dlsym

    .globl  dlopen
    .type   dlopen, @function
dlopen:
    .cfi_startproc
    and     $~0x8, %esi            /* RTLD_DEEPBIND */
    mov     gl_real_dlopen(%rip), %rax
    test    %rax, %rax
    jz      2f
    jmp     *%rax
2:
    push    %rdi
    .cfi_adjust_cfa_offset 8
    push    %rsi
    .cfi_adjust_cfa_offset 8
    sub     $8, %rsp
    .cfi_adjust_cfa_offset 8
    call    gl_resolve_dlopen
    add     $8, %rsp
    .cfi_adjust_cfa_offset -8
    pop     %rsi
    .cfi_adjust_cfa_offset -8
    pop     %rdi
    .cfi_adjust_cfa_offset -8
    jmp     *%rax
    .cfi_endproc
    .size   dlopen, .-dlopen

    .section .note.GNU-stack,"",@progbits
