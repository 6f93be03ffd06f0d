/* <cjson/cJSON.h> for the fallback build */
#include "../../cJSON.h"
