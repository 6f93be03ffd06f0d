/* The s0_wait_predicate that WaitForSandboxLifecycle hands to the C wait:
 * it forwards to the exported Go function with the opaque handle. */
#include <stdint.h>
#include <sandbox0/sandbox0.h>

extern int s0goPredicate(void *info, uintptr_t payload);

static int s0go_predicate(const s0_sandbox_info *info, void *payload)
{
	return s0goPredicate((void *)info, (uintptr_t)payload);
}

uintptr_t s0go_predicate_addr(void)
{
	return (uintptr_t)&s0go_predicate;
}
