#include "config.h"
#include "test.h"
int
main(void)
{
	TEST_MAIN_END();
}
