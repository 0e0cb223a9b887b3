/* The MPU-6050 accelerometer and gyroscope on the TWI bus (0x68 or 0x69). */
#ifndef HIL_SIMAVR_MPU6050_H
#define HIL_SIMAVR_MPU6050_H

#include "signal_link.h"

extern const signal_kind mpu6050_kind;

#endif
