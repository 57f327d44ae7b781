/* c10.c — a stand-in libc10.so (tests/pystub): the shim links against it as
 * against the real one; nothing in it is used. */
int gl_stub_c10;
